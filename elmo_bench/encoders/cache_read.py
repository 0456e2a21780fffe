"""Reading layers for a run (elmo_bench.encoders.cache): one flat cache entry (:class:`CachedLayers`; a sharded
one: elmo_bench.encoders.shards), the same interface computed live without a cache (:class:`LiveLayers`,
``cache=false``), and the encoder's checks a split's layers pass through."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from elmo_bench.encoders.bilm.encoder import as_encoder
from elmo_bench.encoders.cache_fill import compute_layers, forced_unknown_words
from elmo_bench.encoders.protocol import Encoder
from elmo_bench.encoders.segments import MAX_SEGMENT
from elmo_bench.encoders.settings import DEFAULT_CACHE_DTYPE
from elmo_bench.encoders.shards import NUMPY, SUFFIX, ShardedLayers

#: numpy dtype and layer file of each ``encoder.cache_dtype``
STORAGE = {name: (NUMPY[name], f"layers.{SUFFIX[name]}") for name in ("fp16", "fp32")}

class CachedLayers:
    """Read access to one cache entry: ``get(i)`` → (L+1, n_i, dim) float32 for sequence i."""

    def __init__(self, directory: Path) -> None:
        self.meta = meta = json.loads((directory / "meta.json").read_text())
        self.offsets = np.load(directory / "offsets.npy")
        self.rows = np.load(directory / "rows.npy")  # sequence i → its row among the distinct sequences
        self.num_layers, self.dim = meta["num_layers"], meta["dim"]
        self.dtype = str(meta.get("dtype", DEFAULT_CACHE_DTYPE))  # entries before cache_dtype: fp16
        self.directory = directory
        self.data = self._map()

    def _map(self) -> np.memmap:
        """The entry's layer file as a read-only memory map (total_tokens, layers, dim)."""
        kind, name = STORAGE[self.dtype]
        shape = (max(int(self.offsets[-1]), 1), self.num_layers, self.dim)
        return np.memmap(self.directory / name, dtype=kind, mode="r", shape=shape)

    def release(self) -> None:
        """Let go of the pages read so far: a new map of the file (the old one is unmapped once no array read from
        it is left), so a reader that goes through the whole entry chunk by chunk does not keep every page of it in
        its resident set (the pages stay in the OS's file cache)."""
        self.data = self._map()

    def __len__(self) -> int:
        return len(self.rows)

    def get(self, index: int) -> np.ndarray:
        return np.asarray(self.stored(index), dtype=np.float32)

    def stored(self, index: int) -> np.ndarray:
        """Sequence ``index``'s (layers, n, dim) in the entry's own dtype (fp16: no float32 copy)."""
        row = self.rows[index]
        a, b = self.offsets[row], self.offsets[row + 1]
        return np.asarray(self.data[a:b]).transpose(1, 0, 2)


def open_entry(directory: Path) -> CachedLayers | ShardedLayers:
    """An entry's reader: sharded (elmo_bench.encoders.shards) when its meta.json says so, else the flat one."""
    meta = json.loads((directory / "meta.json").read_text())
    return ShardedLayers(directory) if meta.get("shard_sentences") else CachedLayers(directory)


class LiveLayers:
    """``cache=false``: the same interface, computing each requested sequence with the encoder (no disk)."""

    def __init__(self, encoder: Encoder, sequences: Sequence[Sequence[str]], max_segment: int = MAX_SEGMENT) -> None:
        self.bilm, self.sequences, self.max_segment = as_encoder(encoder), sequences, max_segment
        self.seconds_in_bilm = 0.0

    def __len__(self) -> int:
        return len(self.sequences)

    def get(self, index: int) -> np.ndarray:
        started = time.perf_counter()
        seq = self.sequences[index]
        offsets = np.array([0, len(seq)], dtype=np.int64)
        out = np.zeros((max(len(seq), 1), self.bilm.num_layers, self.bilm.dim), dtype=np.float32)
        compute_layers(self.bilm, [seq], out, offsets, self.max_segment, progress=False)
        self.seconds_in_bilm += time.perf_counter() - started
        return out[: len(seq)].transpose(1, 0, 2)


def source_forced_unknown(source: CachedLayers | LiveLayers, encoder: Encoder,
                          sequences: Sequence[Sequence[str]]) -> int | None:
    """:func:`forced_unknown_words` of a split's layer source: read from its cache entry's meta.json when recorded
    there, else counted (tokenising only)."""
    recorded = getattr(source, "meta", {}).get("forced_unknown_words")
    return int(recorded) if recorded is not None else forced_unknown_words(as_encoder(encoder), sequences)


def check_first_sentence(encoder: Encoder, sentences: Sequence[Sequence[str]], where: str) -> None:
    """Let the encoder refuse itself on the run's first training sentence before any layer is computed (a
    transformer whose tokenizer turns most of its words into the unknown token); a no-op for other encoders."""
    check = getattr(as_encoder(encoder), "check_sentence", None)
    first = next((s for s in sentences if len(s)), None)
    if callable(check) and first is not None:
        check(list(first), where)
