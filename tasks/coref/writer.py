"""Write predicted clusters as a CoNLL-2012 file: the key's rows with the last column replaced, for the scorer."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import DataError
from elmo_bench.data.conll2012_coref import _BEGIN, _NAME_PART, Cluster

DocKey = tuple[str, int]


def coref_cells(clusters: Sequence[Cluster], n_tokens: int) -> list[str]:
    """Per token the bracket cell (``(3``, ``3)``, ``(3)``, joined by ``|``; ``-`` when empty). Entity ids are
    the cluster indices; openings of longer spans come first so nested mentions read back correctly."""
    opens: list[list[tuple[int, int]]] = [[] for _ in range(n_tokens)]
    singles: list[list[int]] = [[] for _ in range(n_tokens)]
    closes: list[list[tuple[int, int]]] = [[] for _ in range(n_tokens)]
    for cid, cluster in enumerate(clusters):
        for start, end in cluster:
            if not 0 <= start <= end < n_tokens:
                raise DataError(f"predicted mention ({start}, {end}) outside the document's {n_tokens} tokens")
            if start == end:
                singles[start].append(cid)
            else:
                opens[start].append((-end, cid))
                closes[end].append((-start, cid))
    cells = []
    for t in range(n_tokens):
        parts = [f"({c}" for _, c in sorted(opens[t])] + [f"({c})" for c in singles[t]]
        parts += [f"{c})" for _, c in sorted(closes[t], reverse=True)]
        cells.append("|".join(parts) if parts else "-")
    return cells


def conll_text(key_path: str | Path, predictions: Mapping[DocKey, Sequence[Cluster]]) -> str:
    """The key file's text with every token row's last column replaced by the predicted brackets; documents
    without a prediction get no mentions."""
    lines = Path(key_path).read_text(encoding="utf-8").splitlines()
    doc_rows: list[int] = []
    doc: DocKey | None = None
    out = list(lines)

    def flush() -> None:
        cells = coref_cells(predictions.get(doc, []), len(doc_rows))
        for row, cell in zip(doc_rows, cells):
            line = lines[row]
            if "\t" in line:
                fields = line.split("\t")
                fields[-1] = cell
                out[row] = "\t".join(fields)
            else:
                stripped = line.rstrip()
                cut = len(stripped) - len(stripped.split()[-1])
                out[row] = stripped[:cut] + cell

    for i, line in enumerate(lines):
        s = line.strip()
        m = _BEGIN.match(s)
        if m:
            np_ = _NAME_PART.match(m.group(1))
            doc = (np_.group(1), int(np_.group(2))) if np_ else (m.group(1), 0)
            doc_rows = []
        elif s.startswith("#") and s[1:].strip().startswith("end document"):
            if doc is not None:
                flush()
            doc = None
        elif s and doc is not None:
            doc_rows.append(i)
    return "\n".join(out) + "\n"


def write_conll(key_path: str | Path, out_path: str | Path, predictions: Mapping[DocKey, Sequence[Cluster]]) -> None:
    """Atomic write (temp file + rename) of ``conll_text``."""
    atomic_write_text(out_path, conll_text(key_path, predictions))  # temporaries of killed writes are cleaned
