"""Rows of a memory-mapped cache file written with ``os.pwrite`` instead of through the mapping, synced behind.

The activation cache's layers file is a memmap (tokens, L+1, dim). Assigning a batch's rows through the mapping
faults every fresh 4 KiB page in and leaves it dirty in the page tables, and the ``flush`` before the entry is
published then walks them all: 0.35 s of stores and 0.55 s of flush for the 253 MB of ``bench/encoder_speed.py``
here, against 0.08 s and 0.29 s for the same bytes written with ``pwrite``, one call per piece (each piece's words
are contiguous rows of the file). The file is the same: Linux and macOS keep one page cache for a file's mapping
and its writes, so the memmap, read afterwards or flushed, sees these bytes.

Write-behind: each time another ``SYNC_EVERY`` bytes were written, a background thread calls ``fdatasync`` (it
releases the GIL), so the disk works during the next forward passes and the sync at the end finds little left.
Nothing is published before ``close`` has synced all of it.
"""
from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Sequence

import numpy as np

#: bytes written between two background syncs: large enough that each is a long sequential write
SYNC_EVERY = 32 << 20


def data_sync(fd: int) -> None:
    """fdatasync where the system has it (Linux), else fsync (macOS)."""
    (os.fdatasync if hasattr(os, "fdatasync") else os.fsync)(fd)


class FileRows:
    """Write access to a writable ``np.memmap``'s file: ``write(starts, lengths, values)`` puts ``values``' rows, in
    order, at row ``starts[j]`` for ``lengths[j]`` rows each; ``close()`` makes them durable."""

    def __init__(self, out: np.memmap, sync_every: int = SYNC_EVERY) -> None:
        self.dtype = out.dtype
        self.row_bytes = int(np.prod(out.shape[1:])) * out.dtype.itemsize
        self.base = int(out.offset)
        self.sync_every, self.unsynced = sync_every, 0
        self.fd = os.open(out.filename, os.O_WRONLY)
        self.syncer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="elmo-bench-sync")
        self.in_flight: Future | None = None

    @staticmethod
    def usable(out: np.ndarray) -> bool:
        """A writable memmap of a named file on a system with ``pwrite``; anything else is assigned in memory."""
        return (isinstance(out, np.memmap) and bool(out.filename) and out.mode in ("r+", "w+")
                and hasattr(os, "pwrite") and out.flags.c_contiguous)

    def write(self, starts: Sequence[int], lengths: Sequence[int], values: np.ndarray) -> None:
        values = np.ascontiguousarray(values, dtype=self.dtype)
        at = 0
        for start, count in zip(starts, lengths):
            view = memoryview(values[at: at + count]).cast("B")
            position = self.base + int(start) * self.row_bytes
            while view:  # pwrite may write less than asked (a signal, a file system's limit): write the rest
                written = os.pwrite(self.fd, view, position)
                view, position = view[written:], position + written
            at += count
        self.unsynced += values.nbytes
        if self.unsynced >= self.sync_every and (self.in_flight is None or self.in_flight.done()):
            if self.in_flight is not None:
                self.in_flight.result()  # a failed sync (a full disk) is raised here, not lost
            self.unsynced = 0
            self.in_flight = self.syncer.submit(data_sync, self.fd)

    def close(self, sync: bool = True) -> None:
        """Wait for the sync in flight, then (``sync``) make every written byte durable; the file is closed."""
        try:
            self.syncer.shutdown(wait=True)
            if self.in_flight is not None and sync:
                self.in_flight.result()
            if sync:
                data_sync(self.fd)
        finally:
            os.close(self.fd)
