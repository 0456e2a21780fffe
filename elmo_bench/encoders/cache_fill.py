"""Computing an activation cache entry's layers (elmo_bench.encoders.cache): sequences cut into segments of at most
``max_segment`` tokens (an encoder that takes whole sequences: never cut), batched by length under a token budget,
each batch's words written into the entry's rows; the memory map reserved on disk first (a full disk is one line,
not a SIGBUS), and the words an encoder had to replace by its unknown token counted."""
from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from tqdm import tqdm

from elmo_bench.encoders.bilm.encoder import as_encoder
from elmo_bench.encoders.file_rows import FileRows
from elmo_bench.encoders.protocol import (
    Encoder,
    check_layers,
    check_packed,
    check_values,
    packed,
    takes_whole_sequences,
)
from elmo_bench.encoders.segments import MAX_SEGMENT

#: the torch dtype a layer file's numpy dtype is written from (others: float32, numpy casts)
TORCH_OF = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32}
#: the largest magnitude fp16 holds: an fp16 entry of larger layers would hold infinities
FP16_MAX = 65504.0


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
