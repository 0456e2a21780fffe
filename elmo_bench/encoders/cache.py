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
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from tqdm import tqdm

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
from elmo_bench.encoders.file_rows import FileRows
from elmo_bench.encoders.protocol import (
    Encoder,
    cache_id,
    check_layers,
    check_packed,
    check_values,
    packed,
    takes_whole_sequences,
)
from elmo_bench.encoders.segments import MAX_SEGMENT
from elmo_bench.encoders.settings import CACHE_DTYPES, DEFAULT_CACHE_DTYPE
from elmo_bench.encoders.shards import (
    LOCK,
    NUMPY,
    PARTIAL,
    SUFFIX,
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
#: the torch dtype a layer file's numpy dtype is written from (others: float32, numpy casts)
TORCH_OF = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32}
#: the largest magnitude fp16 holds: an fp16 entry of larger layers would hold infinities
FP16_MAX = 65504.0
#: numpy dtype and layer file of each ``encoder.cache_dtype``
STORAGE = {name: (NUMPY[name], f"layers.{SUFFIX[name]}") for name in ("fp16", "fp32")}
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


def segments(length: int, max_segment: int) -> list[tuple[int, int]]:
    """Split [0, length) into consecutive pieces of at most ``max_segment`` tokens."""
    return [(start, min(start + max_segment, length)) for start in range(0, length, max_segment)] or [(0, 0)]


def compute_layers(encoder: Encoder, sequences: Sequence[Sequence[str]], out: np.ndarray, offsets: np.ndarray,
                   max_segment: int = MAX_SEGMENT, batch_tokens: int = 4096, progress: bool = True,
                   batch_sentences: int | None = None) -> None:
    """Fill ``out`` (total_tokens, L+1, dim) with the encoder's layers of every sequence, batched by length (at most
    ``batch_tokens`` tokens and, when given, ``batch_sentences`` pieces a batch: ``extract --batch-size``).

    Sequences are cut into ``max_segment`` pieces unless the encoder takes whole sequences (protocol.py). The
    encoder computes on its own device (moved there beforehand); ``out`` is a CPU array. A writable memmap is
    written through its file (file_rows.py) and is on disk when this returns."""
    encoder = as_encoder(encoder)
    whole = takes_whole_sequences(encoder)
    pieces = [(i, a, b) for i, seq in enumerate(sequences)
              for a, b in ([(0, len(seq))] if whole else segments(len(seq), max_segment)) if b > a]
    pieces.sort(key=lambda p: p[2] - p[1])
    bar = tqdm(total=int(offsets[-1]), desc=str(encoder.identity().get("kind", "encoder")), unit="tok",
               disable=not progress)
    target = FileRows(out) if FileRows.usable(out) else out
    done = False
    try:
        fill(encoder, sequences, pieces, target, offsets, batch_tokens, bar, batch_sentences)
        done = True
    finally:
        if isinstance(target, FileRows):
            target.close(sync=done)
    bar.close()


def fill(encoder: Encoder, sequences: Sequence[Sequence[str]], pieces: list[tuple[int, int, int]],
         out: np.ndarray | FileRows, offsets: np.ndarray, batch_tokens: int, bar: tqdm,
         batch_sentences: int | None = None) -> None:
    """compute_layers' loop: batches of length-sorted pieces up to ``batch_tokens`` (and ``batch_sentences``
    pieces), checked, then stored."""
    start = 0
    packed_layers = packed(encoder)
    most = len(pieces) if batch_sentences is None else batch_sentences
    with torch.no_grad():
        while start < len(pieces):
            end = start + 1  # pieces ascend in length: the batch's longest is its last
            while end < len(pieces) and end - start < most and \
                    (end + 1 - start) * (pieces[end][2] - pieces[end][1]) <= batch_tokens:
                end += 1
            batch = pieces[start:end]
            words = [list(sequences[i][a:b]) for i, a, b in batch]
            if packed_layers is not None:  # the rows as stored: no padded tensor built, then gathered
                result = packed_layers(words)
                check_packed(encoder, words, result)
            else:
                result, mask = encoder.layers(words)
                check_layers(encoder, words, result, mask)  # shapes, then values: never store what is not finite
            check_values(encoder, result, FP16_MAX if out.dtype == np.float16 else None)
            (store_packed if packed_layers is not None else store)(out, result, batch, offsets)
            bar.update(sum(b - a for _, a, b in batch))
            start = end


def piece_rows(batch: Sequence[tuple[int, int, int]], offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first row in ``out``, length) of each piece ``(sequence, start, end)`` of a batch."""
    starts = np.array([offsets[i] + a for i, a, _ in batch], dtype=np.int64)
    return starts, np.array([b - a for _, a, b in batch], dtype=np.int64)


def word_positions(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(piece, position within it) of every word of pieces of ``lengths``, pieces one after another."""
    row = np.repeat(np.arange(len(lengths)), lengths)
    return row, np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def store(out: np.ndarray | FileRows, result: torch.Tensor, batch: Sequence[tuple[int, int, int]],
          offsets: np.ndarray) -> None:
    """Write a batch's layers (batch, L+1, words, dim) into ``out`` (tokens, L+1, dim) at each piece's rows: the
    words of every piece gathered on the encoder's device (no padding copied to the CPU), cast to ``out``'s dtype
    by torch on the CPU (its float16 rounding is numpy's, to nearest even: checked bit for bit on every finite
    float32; three times faster than numpy's), then one scattered write (a memmap's file: one ``pwrite`` a piece,
    file_rows.py)."""
    starts, lengths = piece_rows(batch, offsets)
    if int(lengths.sum()) == 0:
        return
    row, position = word_positions(lengths)
    device = result.device
    words = result[torch.from_numpy(row).to(device), :, torch.from_numpy(position).to(device)]  # (total, L+1, dim)
    write_rows(out, words, starts, lengths)


def store_packed(out: np.ndarray | FileRows, result: torch.Tensor, batch: Sequence[tuple[int, int, int]],
                 offsets: np.ndarray) -> None:
    """:func:`store` for an encoder's ``packed_layers`` (words of the batch's pieces one after another, (words,
    L+1, dim)): the rows are already in the stored layout, so nothing is gathered."""
    starts, lengths = piece_rows(batch, offsets)
    if int(lengths.sum()):
        write_rows(out, result, starts, lengths)


def write_rows(out: np.ndarray | FileRows, words: torch.Tensor, starts: np.ndarray, lengths: np.ndarray) -> None:
    """Rows ``words`` (total, L+1, dim), piece by piece (``lengths``), at ``starts`` of ``out``: cast to ``out``'s
    dtype by torch on the CPU, then one scattered write (a memmap's file: one ``pwrite`` a piece)."""
    kind = TORCH_OF.get(out.dtype, torch.float32)
    values = words.float().cpu().to(kind).numpy()
    if isinstance(out, FileRows):
        out.write(starts, lengths, values)
    else:
        row, position = word_positions(lengths)
        out[starts[row] + position] = values


class CachedLayers:
    """Read access to one cache entry: ``get(i)`` → (L+1, n_i, dim) float32 for sequence i."""

    def __init__(self, directory: Path) -> None:
        self.meta = meta = json.loads((directory / "meta.json").read_text())
        self.offsets = np.load(directory / "offsets.npy")
        self.rows = np.load(directory / "rows.npy")  # sequence i → its row among the distinct sequences
        self.num_layers, self.dim = meta["num_layers"], meta["dim"]
        self.dtype = str(meta.get("dtype", DEFAULT_CACHE_DTYPE))  # entries before cache_dtype: fp16
        total = int(self.offsets[-1])
        kind, name = STORAGE[self.dtype]
        self.data = np.memmap(directory / name, dtype=kind, mode="r", shape=(max(total, 1), self.num_layers, self.dim))

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


#: posix_fallocate's answer on a file system that cannot reserve blocks (the map is then sparse, as before)
NO_RESERVATION = (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS)


def reserved_memmap(path: Path, kind: type, shape: tuple[int, ...]) -> np.memmap:
    """A zero-filled writable memmap whose disk blocks are reserved before any is written: on a full disk a sparse
    map's page write was a SIGBUS that killed the process without a word (exit 135); the reservation is an
    OSError(ENOSPC) instead, which the caller names and the guard prints as one line."""
    size = int(np.prod(shape)) * np.dtype(kind).itemsize
    reserve = getattr(os, "posix_fallocate", None)  # not on macOS: a sparse map there, as before
    reserved = False
    with open(path, "wb") as handle:
        try:
            if reserve is not None:
                reserve(handle.fileno(), 0, size)
                reserved = True
        except OSError as exc:
            if exc.errno not in NO_RESERVATION:
                raise
    return np.memmap(path, dtype=kind, mode="r+" if reserved else "w+", shape=shape)


def forced_unknown_words(encoder: Encoder, sequences: Sequence[Sequence[str]],
                         rows: np.ndarray | None = None) -> int | None:
    """How many words of ``sequences`` (each counted as often as ``rows`` names it) the encoder had to replace by
    its unknown token because their sentence does not fit its window (a transformer's words longer than half a
    window); None for an encoder that never replaces a word."""
    count = getattr(encoder, "forced_unknown", None)
    if not callable(count):
        return None
    per_sequence = np.asarray(count(sequences), dtype=np.int64)
    return int(per_sequence.sum() if rows is None else per_sequence[rows].sum()) if len(per_sequence) else 0


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
