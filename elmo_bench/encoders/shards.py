"""Sharded activation cache entries: exact resume after a kill, and data-parallel extraction under torchrun.

An entry built with ``shard_sentences=N`` (N >= 1) stores its layers as fixed shards: shard s holds the distinct
sequences [s*N, (s+1)*N) in their first-seen order (a contiguous range of the flat token array), each its own
file ``shard-<s>.<f16|f32>``. Each shard is the unit of work: it is computed on its own (length-sorted batches within
the shard), renamed into place, then given a sidecar ``<file>.sha256``; a shard is complete exactly when its sidecar
exists. The entry is built in ``<key>.partial`` (never a marked temporary: it survives the process so that a killed
extraction resumes), and published by renaming it to ``<key>`` once every shard is complete, with the same
``meta.json`` / ``integrity.sha256`` as an unsharded entry.

The shard size is part of the cache key (``-sh<N>``): batches are formed within a shard, and a different batching
may change the last bits of a float, so entries of different layouts never share a key. Unsharded entries (N = 0,
the default) keep today's keys, layout and bytes.

Resume: a complete shard is checked against its sidecar; one that differs is refused (one line naming the shard,
exit 2), never silently recomputed, since a changed file in a cache directory means a disk or a tool to look at.

Two commands building one entry at once (two ``elmo-bench extract`` into one cache directory): rank 0 of each holds
the entry's lock (``<key>.lock``, an ``flock``: cache.ActivationCache._sharded) from preparing ``<key>.partial`` to
publishing it, so they take turns, and the second then finds the entry published and uses it.

torchrun: rank r of K computes shards r, r+K, ...; the ranks first all-gather their entry key and layout (one line,
exit 2, when they disagree), then rank 0 publishes the entry after a barrier.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.integrity import (
    IntegrityError,
    check_recorded,
    fingerprint,
    format_record,
    sidecar,
    write_manifest,
)
from elmo_bench.encoders.settings import DEFAULT_CACHE_DTYPE

#: suffix of the directory an unfinished sharded entry is built in (kept across a kill: the resume point)
PARTIAL = ".partial"
#: suffix of the file whose ``flock`` a sharded entry's builder holds: two commands building one entry take turns
#: (the second then finds it published); kept in the cache directory, empty between builds
LOCK = ".lock"
SUFFIX = {"fp16": "f16", "fp32": "f32"}
#: numpy dtype of each ``encoder.cache_dtype`` (cache.STORAGE is made from these two tables)
NUMPY: dict[str, Any] = {"fp16": np.float16, "fp32": np.float32}


def shard_file(index: int, dtype: str) -> str:
    return f"shard-{index:05d}.{SUFFIX[dtype]}"


def shard_ranges(distinct: int, shard_sentences: int) -> list[tuple[int, int]]:
    """Distinct-sequence ranges [a, b) of each shard; one empty shard for an empty stream."""
    return [(a, min(a + shard_sentences, distinct)) for a in range(0, distinct, shard_sentences)] or [(0, 0)]


class ShardedLayers:
    """Read access to one sharded entry, the API of cache.CachedLayers: ``get(i)`` → (L+1, n_i, dim) float32."""

    def __init__(self, directory: Path) -> None:
        self.meta = meta = json.loads((directory / "meta.json").read_text())
        self.offsets = np.load(directory / "offsets.npy")
        self.rows = np.load(directory / "rows.npy")
        self.num_layers, self.dim = meta["num_layers"], meta["dim"]
        self.dtype = str(meta.get("dtype", DEFAULT_CACHE_DTYPE))
        self.shard_sentences = int(meta["shard_sentences"])
        self.directory, self.kind = directory, NUMPY[self.dtype]
        self._maps: dict[int, np.memmap] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def _shard(self, index: int) -> tuple[np.memmap, int]:
        start = int(self.offsets[index * self.shard_sentences])
        if index not in self._maps:
            end = int(self.offsets[min((index + 1) * self.shard_sentences, len(self.offsets) - 1)])
            self._maps[index] = np.memmap(self.directory / shard_file(index, self.dtype), dtype=self.kind, mode="r",
                                          shape=(max(end - start, 1), self.num_layers, self.dim))
        return self._maps[index], start

    def get(self, index: int) -> np.ndarray:
        return np.asarray(self.stored(index), dtype=np.float32)

    def release(self) -> None:
        """Let go of the pages read so far (cache_read.CachedLayers.release): the shards are mapped again when read."""
        self._maps.clear()

    def stored(self, index: int) -> np.ndarray:
        """Sequence ``index``'s (layers, n, dim) in the entry's own dtype (fp16: no float32 copy)."""
        row = int(self.rows[index])
        data, start = self._shard(row // self.shard_sentences)
        a, b = int(self.offsets[row]) - start, int(self.offsets[row + 1]) - start
        return np.asarray(data[a:b]).transpose(1, 0, 2)


def listed_shards(meta: dict[str, Any]) -> list[str]:
    """The shard files an entry's meta.json says it has."""
    return [shard_file(i, str(meta.get("dtype", DEFAULT_CACHE_DTYPE))) for i in range(int(meta["shards"]))]


def world() -> tuple[int, int]:
    """(rank, world size): torch.distributed's when a process group is up or torchrun started this process (the
    group is then made: NCCL where CUDA is, gloo otherwise); (0, 1) for one process."""
    import torch  # lazy: torch
    import torch.distributed as dist  # lazy: torch

    if not dist.is_available():
        return 0, 1
    if not dist.is_initialized():
        if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
            return 0, 1
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_rank(), dist.get_world_size()


def agree(layout: dict[str, Any], rank: int, size: int) -> None:
    """All ranks hold the same entry key and layout, or every rank raises one ConfigError line naming the first
    rank that differs from rank 0."""
    if size == 1:
        return
    import torch.distributed as dist  # lazy: torch

    mine = json.dumps(layout, sort_keys=True)
    gathered: list[Any] = [None] * size
    dist.all_gather_object(gathered, mine)
    for other, text in enumerate(gathered):
        if text != gathered[0]:
            theirs, first = json.loads(text), json.loads(gathered[0])
            diff = sorted(k for k in set(theirs) | set(first) if theirs.get(k) != first.get(k))
            raise ConfigError(f"torchrun: rank {other} disagrees with rank 0 on the configuration ({', '.join(diff)}:"
                              f" {[theirs.get(k) for k in diff]} vs {[first.get(k) for k in diff]}); every rank must "
                              f"run the same command and data")


def barrier(size: int) -> None:
    if size > 1:
        import torch.distributed as dist  # lazy: torch

        dist.barrier()


def prepare_partial(partial: Path, layout: dict[str, Any], offsets: np.ndarray, rows: np.ndarray) -> None:
    """Make (or reopen, checking its layout) the resume directory and its index files."""
    partial.mkdir(exist_ok=True)
    record = partial / "layout.json"
    if record.exists():
        found = json.loads(record.read_text())
        if found != layout:
            raise ConfigError(f"{partial}: an unfinished sharded entry with another layout ({record}); remove the "
                              f"directory to start it again")
    else:
        atomic_write_text(record, json.dumps(layout, sort_keys=True))
    for name, array in (("offsets.npy", offsets), ("rows.npy", rows)):
        if not (partial / name).exists():
            tmp = partial / f".{name}.{os.getpid()}.npy"
            np.save(tmp, array)
            os.replace(tmp, partial / name)


def shard_complete(path: Path) -> bool:
    """True when the shard has its sidecar (complete) and matches it; IntegrityError (one line, exit 2) when it
    differs: a shard that fails its checksum on resume is refused, not recomputed."""
    if not sidecar(path).exists():
        return False
    check_recorded(path, hint=f"; remove {path.name} and {sidecar(path).name} to recompute this shard")
    return True


def finish_shard(tmp: Path, final: Path) -> None:
    """Rename the computed shard into place, then record its size and sha256: complete from that moment."""
    os.replace(tmp, final)
    atomic_write_text(sidecar(final), format_record([(final.name, fingerprint(final))]))


def publish(partial: Path, entry: Path, meta: dict[str, Any], record_name: str) -> bool:
    """Rank 0, every shard complete: check them all, write meta.json and the entry's integrity record, drop the
    sidecars and layout, rename ``partial`` to ``entry``. False when another run published the entry first."""
    shards = listed_shards(meta)
    for name in shards:
        if not shard_complete(partial / name):
            raise IntegrityError(f"{partial / name}: missing after every rank finished (a rank failed?)")
    atomic_write_text(partial / "meta.json", json.dumps(meta))
    write_manifest(partial, ["meta.json", "offsets.npy", "rows.npy", *shards], record_name)
    for name in shards:
        sidecar(partial / name).unlink()
    (partial / "layout.json").unlink()
    for leftover in partial.glob(".*"):  # a killed process's half-written shard (every rank is done by now)
        leftover.unlink()
    try:
        os.rename(partial, entry)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        return False
    return True


def compute_shards(cache: Any, partial: Path, distinct: Sequence[Sequence[str]], offsets: np.ndarray,
                   rank: int, size: int, compute: Callable[..., None], reserve: Callable[..., np.memmap]) -> None:
    """This rank's shards (r, r+K, ...), each computed unless complete, in order; the unit of work and of resume.
    ``compute`` and ``reserve`` are cache.compute_layers and cache.reserved_memmap (passed in: no import circle)."""
    kind = NUMPY[cache.dtype]
    ranges = shard_ranges(len(distinct), cache.shard_sentences)
    for index in range(rank, len(ranges), size):
        final = partial / shard_file(index, cache.dtype)
        if shard_complete(final):
            continue
        a, b = ranges[index]
        local = offsets[a: b + 1] - offsets[a]
        tmp = partial / f".{final.name}.{os.getpid()}.tmp"
        shape = (max(int(local[-1]), 1), cache.encoder.num_layers, cache.encoder.dim)
        try:
            data = reserve(tmp, kind, shape)
            compute(cache.encoder, distinct[a:b], data, local, cache.max_segment,
                                        cache.batch_tokens, cache.progress, cache.batch_sentences)
            data.flush()
            del data
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        finish_shard(tmp, final)
