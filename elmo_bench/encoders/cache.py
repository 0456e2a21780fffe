"""Activation cache: the frozen encoder runs once per (encoder identity, token stream), every later run reads from disk.

The encoder is anything that follows elmo_bench.encoders.protocol (the biLM, a transformer, an hdf5 file, a user
class); a bare BiLM is accepted and wrapped. For the biLM the key is exactly what it was before encoders existed.

A sweep changes the mix, head, lambda, data fraction or seed, never the biLM, so the L+1 layers of a token stream
are computed once, stored fp16 in one flat memory-mapped array (tokens, L+1, dim) with per-sequence offsets, and
shared by every run. Repeated sequences (a SQuAD paragraph asked about many times) are computed once. The key hashes
the biLM identity and the whole token stream; the engine asks for the examples a run actually trains on, so a
sweep over mixes, heads, lambda or placement reuses one entry (and over seeds too, at the full data: a fraction's
subset depends on the seed), and a small fraction computes only its own share.

Writes are atomic: the entry is built in an owned temporary directory (elmo_bench.base.atomic: a marked
``.elmo_bench-tmp.*`` directory) and renamed into place, so a run killed half-way leaves no entry that a later run
would read, and its temporary directory is removed by the next cache build in the same directory (the owner process
is gone); nothing else in the cache directory is ever removed. Long sequences go through the biLM in segments of at
most ``max_segment`` tokens, and batches are bounded by a token budget, so memory stays bounded on long documents.

Integrity: every entry holds ``integrity.sha256`` (elmo_bench.base.integrity: size and sha256 of each file), written
before the entry is published. The first use of an entry in a process checks it (sizes by ``stat``, hashes once a
process); an entry that differs, is truncated, or has no record (written before records existed) is set aside and
rebuilt, with a warning in the log.

This module keys, builds and publishes entries; cache_fill.py computes their layers, cache_read.py reads them (and
computes them live without a cache).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from elmo_bench.base.atomic import (
    apply_umask,
    held_lock,
    mark_as_temporary,
    named,
    owned_temp_dir,
    remove_owned,
    remove_stale,
)
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.integrity import IntegrityError, check_files, write_manifest
from elmo_bench.encoders.bilm.encoder import as_encoder
from elmo_bench.encoders.cache_fill import compute_layers, forced_unknown_words, reserved_memmap
from elmo_bench.encoders.cache_read import STORAGE, CachedLayers
from elmo_bench.encoders.protocol import (
    Encoder,
    cache_id,
    takes_whole_sequences,
)
from elmo_bench.encoders.segments import MAX_SEGMENT
from elmo_bench.encoders.settings import CACHE_DTYPES, DEFAULT_CACHE_DTYPE
from elmo_bench.encoders.shards import (
    LOCK,
    PARTIAL,
    ShardedLayers,
    agree,
    barrier,
    compute_shards,
    listed_shards,
    prepare_partial,
    publish,
    shard_ranges,
    world,
)

log = logging.getLogger(__name__)
#: part of every key: entries written in an older layout are never read, they are recomputed under a new key
FORMAT_VERSION = 2
#: the integrity record inside every entry, and the files it lists
RECORD = "integrity.sha256"
ENTRY_FILES = ("meta.json", "offsets.npy", "rows.npy", "layers.f16")
#: what the cache does with a thing at an entry's name that it did not make (a symlink, a file)
NOT_OURS = "not this program's, so it is left as it is: remove or move it, or choose another paths.cache_dir"


def entry_files(dtype: str) -> tuple[str, ...]:
    """The files of an entry stored in ``dtype`` (fp16: the old layout exactly)."""
    return ("meta.json", "offsets.npy", "rows.npy", STORAGE[dtype][1])


def cache_directory(path: str | Path) -> Path:
    """``path`` as a cache directory: created if absent; ConfigError (one line) if it is a file or cannot be made."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"cache directory {path} is a file, expected a directory (paths.cache_dir / --cache-dir)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cache directory {path}: cannot be created ({exc.strerror}; paths.cache_dir / "
                          f"--cache-dir)") from None
    return path


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


class ActivationCache:
    """Entries of one encoder. ``encoder_id`` defaults to :func:`elmo_bench.encoders.protocol.cache_id`; a bare
    BiLM with an id (the old call) is wrapped and keyed by that id, as before. ``dtype`` is ``encoder.cache_dtype``:
    fp16 (the old keys and entries) or fp32 (a key of its own). ``shard_sentences`` N >= 1 writes the entry as
    shards of N distinct sequences (resumable, split across torchrun ranks; elmo_bench.encoders.shards; a key of
    its own); 0 (the default) is today's single-file entry. ``batch_sentences`` caps the sequences an encoder batch
    holds (``extract --batch-size``; None: ``batch_tokens`` alone, as before): memory, not the key. After
    :meth:`layers`, ``found`` says whether the entry was there already (True) or computed (False)."""

    def __init__(self, directory: str | Path, encoder: Encoder, encoder_id: str | None = None,
                 max_segment: int = MAX_SEGMENT, batch_tokens: int = 4096, progress: bool = True,
                 dtype: str = DEFAULT_CACHE_DTYPE, shard_sentences: int = 0,
                 batch_sentences: int | None = None) -> None:
        if dtype not in CACHE_DTYPES:
            raise ConfigError(f"config: encoder.cache_dtype expected one of {', '.join(CACHE_DTYPES)}, found {dtype!r}")
        if isinstance(shard_sentences, bool) or not isinstance(shard_sentences, int) or shard_sentences < 0:
            raise ConfigError(f"config: shard_sentences expected an integer >= 0 (0: one file), found "
                              f"{shard_sentences!r}")
        self.shard_sentences = shard_sentences
        self.encoder = as_encoder(encoder, encoder_id)
        self.directory, self.bilm_id = Path(directory), encoder_id or cache_id(self.encoder)
        self.max_segment, self.batch_tokens, self.progress = max_segment, batch_tokens, progress
        self.dtype, self.files = dtype, entry_files(dtype)
        self.seconds_in_bilm = 0.0
        self.batch_sentences, self.found = batch_sentences, None

    def _open_checked(self, entry: Path, key: str | None = None) -> CachedLayers:
        """The entry after its integrity check and, with ``key``, the check that its meta.json names that key (an
        entry copied under another name is not this one); IntegrityError otherwise, or when it has no record."""
        try:
            if not (entry / RECORD).exists():
                raise IntegrityError(f"{entry}: no {RECORD} (written before entries had integrity records, or a "
                                     f"file of the entry is missing)")
            layers = self._open_files(entry)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # ValueError: bad JSON, short memmap
            if isinstance(exc, IntegrityError):
                raise
            raise IntegrityError(f"{entry}: cannot be opened ({exc})") from None
        if key is not None and layers.meta.get("key") != key:
            raise IntegrityError(f"{entry}: its meta.json names key {layers.meta.get('key')!r}, not {key!r} (an "
                                 f"entry copied or renamed)")
        return layers

    def _open_files(self, entry: Path) -> CachedLayers | ShardedLayers:
        """Check the entry's files against its record (a sharded entry's shards as its meta.json lists them), then
        open it."""
        if not self.shard_sentences:
            check_files(entry / RECORD, [entry / name for name in self.files], require_listed=True)
            return CachedLayers(entry)
        check_files(entry / RECORD, [entry / "meta.json"], require_listed=True)
        meta = json.loads((entry / "meta.json").read_text())
        names = ["offsets.npy", "rows.npy", *listed_shards(meta)]
        check_files(entry / RECORD, [entry / name for name in names], require_listed=True)
        return ShardedLayers(entry)

    def _checked(self, entry: Path, key: str) -> CachedLayers | None:
        """The entry, if it matches its integrity record and key and opens; else None, after setting it aside."""
        try:
            return self._open_checked(entry, key)
        except IntegrityError as exc:
            log.warning("activation cache entry cannot be used, rebuilding it: %s", exc)
        if entry.is_symlink():  # not this program's: left as it is (the rebuild then names it, one line)
            return None
        try:  # the entry is this program's: it becomes an owned temporary, then goes
            remove_owned(mark_as_temporary(entry, entry.name))
        except OSError as exc:  # another process set it aside first, or the directory is read-only
            log.info("could not set aside %s (%s)", entry, exc)
        return None

    def key(self, sequences: Sequence[Sequence[str]]) -> str:
        segmenting = "all" if takes_whole_sequences(self.encoder) else self.max_segment
        stored = "" if self.dtype == DEFAULT_CACHE_DTYPE else f"-{self.dtype}"  # fp16: the old keys
        sharded = f"-sh{self.shard_sentences}" if self.shard_sentences else ""  # unsharded: the old keys
        return f"v{FORMAT_VERSION}-{self.bilm_id}-{stream_hash(sequences)}-seg{segmenting}{stored}{sharded}"

    def layers(self, sequences: Sequence[Sequence[str]], name: str = "") -> CachedLayers | ShardedLayers:
        """The entry for ``sequences``, computed and stored first if absent."""
        key = self.key(sequences)
        entry = self.directory / key
        total = sum(len(s) for s in sequences)
        cache_directory(self.directory)
        if os.path.lexists(entry) and not entry.is_symlink() and not entry.is_dir():  # before the encoder runs
            raise IntegrityError(f"{entry}: a file, not an activation cache entry (a directory); {NOT_OURS}")
        if entry.exists() or entry.is_symlink():  # any file of it missing (meta.json too): set aside, rebuilt
            layers = self._checked(entry, key)
            if layers is not None:
                self.found = True
                log.info("activation cache hit: %s %s (%d sequences, %d tokens, 0 s in the biLM)", name, key,
                         len(sequences), total)
                return layers
        log.info("activation cache miss: %s %s: %d tokens", name, key, total)
        self.found = False
        started = time.perf_counter()
        if self.shard_sentences:
            return self._sharded(entry, key, sequences, total, started)
        try:
            remove_stale(self.directory)
            tmp = owned_temp_dir(self.directory, key)
        except OSError as exc:
            raise ConfigError(f"activation cache directory {self.directory}: cannot write the entry {key} "
                              f"({exc.strerror or exc}); make it writable or choose another (paths.cache_dir / "
                              f"--cache-dir)") from None
        published = self._build(tmp, entry, key, sequences, total)
        seconds = time.perf_counter() - started
        self.seconds_in_bilm += seconds
        log.info("activation cache stored: %s %s in %.1f s", name, key, seconds)
        if not published:  # the entry there is another run's, or a bad one that could not be set aside
            try:
                return self._open_checked(entry, key)
            except IntegrityError as exc:
                raise not_replaced(entry, exc) from None
        return CachedLayers(entry)

    def _sharded(self, entry: Path, key: str, sequences: Sequence[Sequence[str]], total: int,
                 started: float) -> ShardedLayers | CachedLayers:
        """Build (or resume) a sharded entry in ``<key>.partial``: this rank's shards, then, after every rank's,
        rank 0 publishes it (elmo_bench.encoders.shards)."""
        distinct, rows = deduplicate(sequences)
        offsets = np.zeros(len(distinct) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(s) for s in distinct])
        layout = {"key": key, "shard_sentences": self.shard_sentences, "batch_tokens": self.batch_tokens,
                  "shards": len(shard_ranges(len(distinct), self.shard_sentences)), "dtype": self.dtype,
                  "num_layers": self.encoder.num_layers, "dim": self.encoder.dim,
                  **({} if self.batch_sentences is None else {"batch_sentences": self.batch_sentences})}
        rank, size = world()
        agree(layout, rank, size)
        partial = self.directory / f"{key}{PARTIAL}"
        # another command building the same entry (a second extract into this cache): rank 0 of each takes turns
        # on the entry's lock, so one never removes or renames what the other is writing (issue 56 item 8)
        lock = held_lock(self.directory / f"{key}{LOCK}", f"activation cache entry {key}") if rank == 0 else None
        try:
            with lock or contextlib.nullcontext():
                if rank == 0 and not entry.is_dir():
                    prepare_partial(partial, layout, offsets, rows)
                barrier(size)
                found = entry.is_dir()  # published by the other writer while this one waited: found, not rebuilt
                if not found:
                    compute_shards(self, partial, distinct, offsets, rank, size, compute_layers, reserved_memmap)
                    barrier(size)
                    if rank == 0:
                        meta = {**self._meta(key, sequences, total, distinct, rows, offsets), **layout}
                        publish(partial, entry, meta, RECORD)
                    barrier(size)
        except OSError as exc:  # a full disk: one line naming the entry; the complete shards stay for a resume
            raise named(exc, entry) from exc
        seconds = time.perf_counter() - started
        if found:
            log.info("activation cache hit: %s (another process built it while this one waited)", key)
        else:
            self.seconds_in_bilm += seconds
            log.info("activation cache stored: %s in %.1f s (%d shards, rank %d of %d)", key, seconds,
                     layout["shards"], rank, size)
        try:
            return self._open_checked(entry, key)
        except IntegrityError as exc:
            raise not_replaced(entry, exc) from None

    def _meta(self, key: str, sequences: Sequence[Sequence[str]], total: int, distinct: Sequence[Sequence[str]],
              rows: np.ndarray, offsets: np.ndarray) -> dict[str, Any]:
        """An entry's meta.json: what it holds and which encoder made it."""
        meta = {"key": key, "bilm": self.bilm_id, "sequences": len(sequences), "tokens": total,
                "distinct_sequences": len(distinct), "computed_tokens": int(offsets[-1]),
                "num_layers": self.encoder.num_layers, "dim": self.encoder.dim, "max_segment": self.max_segment,
                "encoder": self.encoder.identity(), "dtype": self.dtype}
        extras = getattr(self.encoder, "extras", None)  # how pooling was chosen, the layer indices kept...
        if callable(extras):
            meta["encoder_facts"] = extras()
        forced = forced_unknown_words(self.encoder, distinct, rows)
        if forced is not None:
            meta["forced_unknown_words"] = forced
        return meta

    def _build(self, tmp: Path, entry: Path, key: str, sequences: Sequence[Sequence[str]], total: int) -> bool:
        """Compute the entry in ``tmp`` (complete and finite, or nothing) and rename it to ``entry``; False when
        another run's entry is there first. ``tmp`` is removed on any failure."""
        try:
            distinct, rows = deduplicate(sequences)
            offsets = np.zeros(len(distinct) + 1, dtype=np.int64)
            offsets[1:] = np.cumsum([len(s) for s in distinct])
            np.save(tmp / "offsets.npy", offsets)
            np.save(tmp / "rows.npy", rows)
            shape = (max(int(offsets[-1]), 1), self.encoder.num_layers, self.encoder.dim)
            kind, layer_file = STORAGE[self.dtype]
            data = reserved_memmap(tmp / layer_file, kind, shape)
            compute_layers(self.encoder, distinct, data, offsets, self.max_segment, self.batch_tokens, self.progress,
                           self.batch_sentences)
            data.flush()
            del data
            meta = self._meta(key, sequences, total, distinct, rows, offsets)
            (tmp / "meta.json").write_text(json.dumps(meta))
            write_manifest(tmp, self.files, RECORD)  # hashed now: this process does not hash the entry again
            apply_umask(tmp, directory=True)  # mkdtemp made it 0700
            try:
                os.rename(tmp, entry)
            except OSError:  # another run finished the same entry first (checked below), or the bad one is stuck
                shutil.rmtree(tmp, ignore_errors=True)
                return False
        except OSError as exc:  # a full disk: the one no-space line names the entry, not the temporary
            shutil.rmtree(tmp, ignore_errors=True)
            raise named(exc, entry) from exc
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return True


def not_replaced(entry: Path, exc: IntegrityError) -> IntegrityError:
    """Why a bad entry stayed: a symlink at the entry's name is not this program's (left as it is, never removed);
    a directory it could not set aside is a permissions matter."""
    if entry.is_symlink():
        return IntegrityError(f"{exc}; the entry is a symlink, {NOT_OURS}")
    return IntegrityError(f"{exc}; the entry could not be replaced (permissions?): remove {entry}")
