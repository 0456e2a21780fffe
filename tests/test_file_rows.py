"""The activation cache's layers file written with pwrite (elmo_bench/encoders/file_rows.py) holds exactly the bytes
the in-memory scattered store gives, whatever pwrite's partial writes and the background syncs do; failures close
the file and are raised."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from elmo_bench.encoders import file_rows
from elmo_bench.encoders.cache_fill import compute_layers, reserved_memmap, store
from elmo_bench.encoders.file_rows import FileRows

OFFSETS = np.array([0, 3, 3, 7, 9], dtype=np.int64)  # four sequences of 3, 0, 4 and 2 tokens
BATCHES = [[(3, 0, 2), (0, 0, 3)], [(2, 0, 4)]]  # (sequence, start, end) pieces, two batches


def batch_result(batch, seed: int) -> torch.Tensor:
    """(batch, layers=2, words=4, dim=3) values distinct per position; padding left huge (never written)."""
    result = torch.full((len(batch), 2, 4, 3), 7e4)
    generator = torch.Generator().manual_seed(seed)
    for row, (_, a, b) in enumerate(batch):
        result[row, :, : b - a] = torch.randn(2, b - a, 3, generator=generator)
    return result


def in_memory(dtype) -> np.ndarray:
    out = np.zeros((9, 2, 3), dtype=dtype)
    for seed, batch in enumerate(BATCHES):
        store(out, batch_result(batch, seed), batch, OFFSETS)
    return out


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("short_writes", [False, True])
def test_pwrite_rows_equal_the_in_memory_store(tmp_path: Path, monkeypatch, dtype, short_writes):
    if short_writes:  # pwrite may return fewer bytes than asked: the rest must follow at the right place
        real = os.pwrite
        monkeypatch.setattr(file_rows.os, "pwrite", lambda fd, data, at: real(fd, bytes(data)[:5], at))
    synced = []
    real_sync = file_rows.data_sync
    monkeypatch.setattr(file_rows, "data_sync", lambda fd: (synced.append(fd), real_sync(fd)))
    data = reserved_memmap(tmp_path / "layers.bin", dtype, (9, 2, 3))
    assert FileRows.usable(data) and not FileRows.usable(np.zeros((9, 2, 3), dtype))
    rows = FileRows(data, sync_every=1)  # a background sync after every write
    for seed, batch in enumerate(BATCHES):
        store(rows, batch_result(batch, seed), batch, OFFSETS)
    rows.close()
    assert len(synced) >= 2  # at least one behind the writes, and the final one
    expected = in_memory(dtype)
    assert (tmp_path / "layers.bin").read_bytes() == expected.tobytes()
    assert np.asarray(data).tobytes() == expected.tobytes()  # the open map sees the written bytes


class Encoder:
    """Two layers of dim 3: each word's layers are its length and its position; ``fail_at`` raises mid-run."""
    num_layers, dim = 2, 3

    def __init__(self, fail_at: int | None = None) -> None:
        self.calls, self.fail_at = 0, fail_at

    def identity(self) -> dict:
        return {"kind": "toy"}

    def layers(self, words):
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError("encoder failed")
        longest = max(len(w) for w in words)
        out = torch.zeros(len(words), 2, longest, 3)
        mask = torch.zeros(len(words), longest, dtype=torch.bool)
        for row, sentence in enumerate(words):
            for t, word in enumerate(sentence):
                out[row, 0, t], out[row, 1, t] = len(word), t
                mask[row, t] = True
        return out, mask


SENTENCES = [["a", "bb", "ccc"], ["dddd"], ["e", "ff"] * 40]


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts open files through /proc (Linux)")
def test_compute_layers_through_the_file_equals_in_memory_and_closes_on_failure(tmp_path: Path, monkeypatch):
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in SENTENCES])]).astype(np.int64)
    expected = np.zeros((int(offsets[-1]), 2, 3), dtype=np.float16)
    compute_layers(Encoder(), SENTENCES, expected, offsets, max_segment=16, batch_tokens=40, progress=False)
    data = reserved_memmap(tmp_path / "layers.bin", np.float16, expected.shape)
    before = open_fds()  # the map keeps a descriptor of its own
    compute_layers(Encoder(), SENTENCES, data, offsets, max_segment=16, batch_tokens=40, progress=False)
    assert (tmp_path / "layers.bin").read_bytes() == expected.tobytes() and open_fds() == before

    with pytest.raises(RuntimeError, match="encoder failed"):
        compute_layers(Encoder(fail_at=3), SENTENCES, data, offsets, max_segment=16, batch_tokens=40, progress=False)
    assert open_fds() == before

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(file_rows, "data_sync", full_disk)
    with pytest.raises(OSError) as raised:
        compute_layers(Encoder(), SENTENCES, data, offsets, max_segment=16, batch_tokens=40, progress=False)
    assert raised.value.errno == errno.ENOSPC and open_fds() == before
