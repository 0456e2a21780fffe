"""edge_chunk targets from CoNLL-2000 (``word POS chunk`` a line, IOB2 chunk tags): each chunk is one target, its
type (NP, VP, PP, ...) the label. The POS task's CoNLL-2000 reader keeps only the POS column, so the chunk column is
read here, with the CoNLL-2003 reader's tag check and span walk (elmo_bench.data.conll2003). CoNLL-2000 has no official dev set:
the shared ``dev.unofficial_ukplab.txt`` is UKPLab's extra WSJ file (data/SOURCES.md §7a), not part of the task."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.conll2003 import check_tag, iob1_to_bio, iter_entities
from elmo_bench.data.edge import make_target
from elmo_bench.data.textio import open_text
from elmo_bench.tasks.api import Example


def chunk_targets(tags: Sequence[str]) -> list[dict[str, Any]]:
    """One target [start, end) per chunk of an IOB sequence, labelled with its type."""
    return [make_target((start, end), [kind]) for kind, start, end in iter_entities(iob1_to_bio(tags))]


def read_conll2000_chunks(path: str | Path, split: str) -> list[Example]:
    """One CoNLL-2000 file → ``{"id", "tokens", "chunks"}`` per sentence; DataError naming the line on bad rows."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found (expected a CoNLL-2000 file with columns 'word POS chunk')")
    examples: list[Example] = []
    rows: list[list[str]] = []
    with open_text(path) as handle:
        for lineno, line in enumerate([*handle, ""], start=1):
            cols = line.split()
            if not cols:
                if rows:
                    examples.append({"id": f"{split}-{len(examples)}", "tokens": [r[0] for r in rows],
                                     "chunks": [r[2] for r in rows]})
                rows = []
                continue
            if len(cols) != 3 or not check_tag(cols[2]):
                raise DataError(f"{path}:{lineno}: expected 'word POS chunk' with a chunk tag O, B-X or I-X, "
                                f"found {line.strip()[:80]!r}")
            rows.append(cols)
    return examples


def read_native(data_cfg: Mapping[str, Any], split: str) -> list[Example]:
    return [{"id": ex["id"], "tokens": ex["tokens"], "targets": chunk_targets(ex["chunks"])}
            for ex in read_conll2000_chunks(data_cfg[split], split)]
