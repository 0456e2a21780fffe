"""Activation cache: the frozen biLM runs once per (biLM weights, token stream), every later run reads from disk.

A sweep changes the mix, head, lambda, data fraction or seed, never the biLM, so the L+1 layers of a token stream
are computed once, stored fp16 in one flat memory-mapped array (tokens, L+1, dim) with per-sequence offsets, and
shared by every run. Repeated sequences (a SQuAD paragraph asked about many times) are computed once. The key hashes
the biLM identity and the whole token stream; the engine asks for the examples a run actually trains on, so a
sweep over mixes, heads, lambda or placement reuses one entry (and over seeds too, at the full data: a fraction's
subset depends on the seed), and a small fraction computes only its own share.

Writes are atomic: the entry is built in a temporary directory and renamed into place, so a run killed half-way
leaves no entry that a later run would read, and its temporary directory is removed by the next cache build in
the same directory (elmo_bench.base.atomic.remove_stale: the owner process is gone). Long sequences go through the biLM in segments of at most
``max_segment`` tokens, and batches are bounded by a token budget, so memory stays bounded on long documents.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from tqdm import tqdm

from elmo_bench.base.atomic import remove_stale, temp_prefix
from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.model import BiLM

log = logging.getLogger(__name__)
#: part of every key: entries written in an older layout are never read, they are recomputed under a new key
FORMAT_VERSION = 2


def stream_hash(sequences: Sequence[Sequence[str]]) -> str:
    digest = hashlib.sha256()
    for tokens in sequences:
        digest.update("\x1f".join(tokens).encode("utf-8"))
        digest.update(b"\x1e")
    return digest.hexdigest()[:20]


def deduplicate(sequences: Sequence[Sequence[str]]) -> tuple[list[Sequence[str]], np.ndarray]:
    """Distinct sequences (first-seen order) and, for every input sequence, its row among them.

    SQuAD repeats a paragraph for each of its questions and SNLI a premise for each hypothesis: each distinct
    sequence goes through the biLM once.
    """
    seen: dict[tuple[str, ...], int] = {}
    rows = np.array([seen.setdefault(tuple(s), len(seen)) for s in sequences], dtype=np.int64)
    distinct: list[Sequence[str]] = [()] * len(seen)
    for sequence, row in zip(sequences, rows):
        distinct[row] = sequence
    return distinct, rows


def segments(length: int, max_segment: int) -> list[tuple[int, int]]:
    """Split [0, length) into consecutive pieces of at most ``max_segment`` tokens."""
    return [(start, min(start + max_segment, length)) for start in range(0, length, max_segment)] or [(0, 0)]


def compute_layers(bilm: BiLM, sequences: Sequence[Sequence[str]], out: np.ndarray, offsets: np.ndarray,
                   max_segment: int = 256, batch_tokens: int = 4096, progress: bool = True) -> None:
    """Fill ``out`` (total_tokens, L+1, dim) with the biLM layers of every sequence (segments batched by length).

    The biLM computes on its own device (``bilm.to(device)`` beforehand); ``out`` is a CPU array."""
    pieces = [(i, a, b) for i, seq in enumerate(sequences) for a, b in segments(len(seq), max_segment) if b > a]
    pieces.sort(key=lambda p: p[2] - p[1])
    bar = tqdm(total=int(offsets[-1]), desc="biLM", unit="tok", disable=not progress)
    bilm.eval()
    device = next(bilm.parameters()).device  # the biLM runs where it lives (fp32), its layers come back to the CPU
    start = 0
    with torch.no_grad():
        while start < len(pieces):
            end = start + 1  # pieces ascend in length: the batch's longest is its last
            while end < len(pieces) and (end + 1 - start) * (pieces[end][2] - pieces[end][1]) <= batch_tokens:
                end += 1
            batch = pieces[start:end]
            chars = batch_to_ids([sequences[i][a:b] for i, a, b in batch]).to(device)
            layers = bilm(chars).layers.permute(0, 2, 1, 3).float().cpu().numpy()  # (batch, time, L+1, dim)
            for row, (i, a, b) in enumerate(batch):
                out[offsets[i] + a: offsets[i] + b] = layers[row, : b - a]
            bar.update(sum(b - a for _, a, b in batch))
            start = end
    bar.close()


class CachedLayers:
    """Read access to one cache entry: ``get(i)`` → (L+1, n_i, dim) float32 for sequence i."""

    def __init__(self, directory: Path) -> None:
        meta = json.loads((directory / "meta.json").read_text())
        self.offsets = np.load(directory / "offsets.npy")
        self.rows = np.load(directory / "rows.npy")  # sequence i → its row among the distinct sequences
        self.num_layers, self.dim = meta["num_layers"], meta["dim"]
        total = int(self.offsets[-1])
        self.data = np.memmap(directory / "layers.f16", dtype=np.float16, mode="r",
                              shape=(max(total, 1), self.num_layers, self.dim))

    def __len__(self) -> int:
        return len(self.rows)

    def get(self, index: int) -> np.ndarray:
        row = self.rows[index]
        a, b = self.offsets[row], self.offsets[row + 1]
        return np.asarray(self.data[a:b], dtype=np.float32).transpose(1, 0, 2)


class ActivationCache:
    def __init__(self, directory: str | Path, bilm: BiLM, bilm_id: str, max_segment: int = 256,
                 batch_tokens: int = 4096, progress: bool = True) -> None:
        self.directory, self.bilm, self.bilm_id = Path(directory), bilm, bilm_id
        self.max_segment, self.batch_tokens, self.progress = max_segment, batch_tokens, progress
        self.seconds_in_bilm = 0.0

    def key(self, sequences: Sequence[Sequence[str]]) -> str:
        return f"v{FORMAT_VERSION}-{self.bilm_id}-{stream_hash(sequences)}-seg{self.max_segment}"

    def layers(self, sequences: Sequence[Sequence[str]], name: str = "") -> CachedLayers:
        """The entry for ``sequences``, computed and stored first if absent."""
        key = self.key(sequences)
        entry = self.directory / key
        total = sum(len(s) for s in sequences)
        if (entry / "meta.json").exists():
            log.info("activation cache hit: %s %s (%d sequences, %d tokens, 0 s in the biLM)", name, key, len(sequences), total)
            return CachedLayers(entry)
        log.info("activation cache miss: %s %s: %d tokens", name, key, total)
        started = time.perf_counter()
        self.directory.mkdir(parents=True, exist_ok=True)
        remove_stale(self.directory)
        tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(key), dir=self.directory))
        try:
            distinct, rows = deduplicate(sequences)
            offsets = np.zeros(len(distinct) + 1, dtype=np.int64)
            offsets[1:] = np.cumsum([len(s) for s in distinct])
            np.save(tmp / "offsets.npy", offsets)
            np.save(tmp / "rows.npy", rows)
            shape = (max(int(offsets[-1]), 1), self.bilm.num_layers, self.bilm.output_dim)
            data = np.memmap(tmp / "layers.f16", dtype=np.float16, mode="w+", shape=shape)
            compute_layers(self.bilm, distinct, data, offsets, self.max_segment, self.batch_tokens, self.progress)
            data.flush()
            del data
            meta = {"key": key, "bilm": self.bilm_id, "sequences": len(sequences), "tokens": total,
                    "distinct_sequences": len(distinct), "computed_tokens": int(offsets[-1]),
                    "num_layers": self.bilm.num_layers, "dim": self.bilm.output_dim, "max_segment": self.max_segment}
            (tmp / "meta.json").write_text(json.dumps(meta))
            try:
                os.rename(tmp, entry)
            except OSError:  # another run finished the same entry first: theirs is identical
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        seconds = time.perf_counter() - started
        self.seconds_in_bilm += seconds
        log.info("activation cache stored: %s %s in %.1f s", name, key, seconds)
        return CachedLayers(entry)


class LiveLayers:
    """``cache=false``: the same interface, computing each requested sequence with the biLM (no disk)."""

    def __init__(self, bilm: BiLM, sequences: Sequence[Sequence[str]], max_segment: int = 256) -> None:
        self.bilm, self.sequences, self.max_segment = bilm, sequences, max_segment
        self.seconds_in_bilm = 0.0

    def __len__(self) -> int:
        return len(self.sequences)

    def get(self, index: int) -> np.ndarray:
        started = time.perf_counter()
        seq = self.sequences[index]
        offsets = np.array([0, len(seq)], dtype=np.int64)
        out = np.zeros((max(len(seq), 1), self.bilm.num_layers, self.bilm.output_dim), dtype=np.float32)
        compute_layers(self.bilm, [seq], out, offsets, self.max_segment, progress=False)
        self.seconds_in_bilm += time.perf_counter() - started
        return out[: len(seq)].transpose(1, 0, 2)
