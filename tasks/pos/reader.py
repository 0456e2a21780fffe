"""POS readers: UD English-EWT CoNLL-U (gold PTB tags in XPOS, or UPOS), CoNLL-2000 (``word POS chunk``), or the hub.

CoNLL-U rules: ``#`` lines are comments (``# sent_id`` names the example), multiword-token ranges (``3-4``) and
empty nodes (``8.1``) are skipped so the tokens are the syntactic words that carry the tags. CoNLL-2000's POS
column was assigned by the Brill tagger, not by annotators: ``read_splits`` logs that whenever it reads it.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterator, Mapping

from elmo_bench.base.errors import DataError
from elmo_bench.data.conllu import TAG_COLUMNS, missing_file, numbered_lines, read_conllu
from elmo_bench.data.data_options import data_options
from elmo_bench.data.splits import read_splits as shared_read_splits
from elmo_bench.data.textio import open_text
from elmo_bench.tasks.api import Example
from elmo_bench.tasks.pos.config import DataOptions

log = logging.getLogger(__name__)
FORMATS = ("conllu", "conll2000")
BRILL_NOTE = "CoNLL-2000 POS tags were assigned by the Brill tagger: they are not gold Treebank tags"


def read_conll2000(path: str | Path, split: str = "data") -> list[Example]:
    """One CoNLL-2000 file (``word POS chunk`` a line, blank line between sentences) → ``{"id", "tokens", "tags"}``."""
    path = Path(path)
    if not path.exists():
        raise missing_file(path, "a CoNLL-2000 file with columns 'word POS chunk'")
    examples: list[Example] = []
    tokens: list[str] = []
    tags: list[str] = []
    for lineno, line in numbered_lines(path):
        cols = line.split()
        if not cols:
            if tokens:
                examples.append({"id": f"{split}-{len(examples)}", "tokens": list(tokens), "tags": list(tags)})
            tokens.clear()
            tags.clear()
            continue
        if len(cols) != 3:
            raise DataError(f"{path}:{lineno}: expected 3 columns 'word POS chunk', found {len(cols)}: {line[:80]!r}")
        tokens.append(cols[0])
        tags.append(cols[1])
    if tokens:
        examples.append({"id": f"{split}-{len(examples)}", "tokens": tokens, "tags": tags})
    return examples


#: the hub's ``head`` value (``str(None)``) on the rows the file reader skips: multiword-token ranges and empty nodes
_NO_HEAD = ("None", None)


def hub_records_to_examples(ds: Any, name: str, tag_column: str) -> list[Example]:
    """Examples from a hub split: ``universal_dependencies``/``en_ewt`` (``xpos`` strings, ``upos`` ClassLabel ids)
    or ``conll2000`` (``pos_tags`` ClassLabel ids).

    The UD hub copy keeps every CoNLL-U row, multiword-token ranges ("don't" before "do", "n't") and empty nodes
    included, with ``head`` = "None" on exactly those rows; they are dropped here as ``read_conllu`` skips them,
    so the examples are the same (``idx`` = the sentence's ``# sent_id``).
    """
    feature = "pos_tags" if "pos_tags" in ds.features else tag_column
    if feature not in ds.features:
        raise DataError(f"hub split {name}: no column {feature!r}; columns are {sorted(ds.features)}")
    names = getattr(getattr(ds.features[feature], "feature", None), "names", None)
    has_head = "head" in ds.features
    examples = []
    for i, record in enumerate(ds):
        keep = [j for j in range(len(record["tokens"])) if not has_head or record["head"][j] not in _NO_HEAD]
        tags = [record[feature][j] for j in keep]
        tags = [names[t] if names else t for t in tags]
        if len(record[feature]) != len(record["tokens"]) or any(t in (None, "", "_") for t in tags):
            raise DataError(f"hub split {name} record {i}: expected one {feature} tag per token")
        examples.append({"id": str(record.get("idx") or f"{name}-{i}"), "tokens": [record["tokens"][j] for j in keep],
                         "tags": tags})
    return examples


def read_file(path: str | Path, fmt: str, tag_column: str, split: str) -> list[Example]:
    if fmt == "conllu":
        return read_conllu(path, tag_column, split)
    if fmt == "conll2000":
        return read_conll2000(path, split)
    raise ValueError(f"data.format expected one of {FORMATS}, found {fmt!r}")


def read_splits(data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
    """Every split named in ``data_cfg``; ``max_train_sentences`` keeps the first N training sentences (probes on a
    budget: the biLM then only runs on those)."""
    options = data_options(DataOptions, data_cfg)
    fmt, tag_column = options.format, options.tag_column
    out = shared_read_splits(
        data_cfg, lambda path, name: read_file(path, fmt, tag_column, name),
        lambda ds, name: hub_records_to_examples(ds, name, tag_column))
    limit = data_cfg.get("max_train_sentences")
    if limit and "train" in out:
        out["train"] = out["train"][: int(limit)]
    if options.tag_source == "brill" or fmt == "conll2000":
        log.warning("POS data: %s", BRILL_NOTE)
    else:
        log.info("POS data: %s tags (%s)", tag_column, options.tag_source)
    return out
