"""Reading UTF-8 text files so that undecodable bytes become one DataError naming the file, line and byte offset.

Readers and scorers call :func:`open_text` where they would call ``open(path, encoding="utf-8")`` (``.gz`` files
are decompressed). The file is decoded line by line from bytes, so the error can say where the bad byte is.
Every reader goes through here, so the rules for what a text file may hold live here once: a UTF-8 byte-order mark
at the start is dropped (else ``-DOCSTART-`` would read as a word); a NUL byte is refused (``file:line``), as is a
truncated or corrupt ``.gz`` (one DataError instead of gzip's EOFError / BadGzipFile traceback).
"""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import IO, Iterator

from elmo_bench.base.errors import DataError

BOM = "\ufeff"


class Utf8Lines:
    """A read-only text stream over ``path``: iterate for lines (with their newline), or ``read()`` everything."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._raw: IO[bytes] = gzip.open(self.path, "rb") if self.path.suffix == ".gz" else open(self.path, "rb")
        except FileNotFoundError:
            raise DataError(f"{self.path}: file not found") from None
        except OSError as exc:
            raise DataError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
        self.line_number, self.byte_offset = 0, 0

    def _decode(self, raw: bytes) -> str:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"{self.path}: line {self.line_number}: byte offset {self.byte_offset + exc.start}: "
                            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); expected UTF-8 text") from None
        if self.line_number == 1 and text.startswith(BOM):
            text = text[len(BOM):]
        if "\0" in text:
            raise DataError(f"{self.path}:{self.line_number}: NUL byte at column {text.index(chr(0)) + 1}; "
                            f"expected text (a binary or corrupt file?)")
        return text

    def _next_raw(self) -> bytes:
        """The next raw line ('' at the end); a truncated or corrupt ``.gz`` is one DataError naming the file."""
        try:
            return self._raw.readline()
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise DataError(f"{self.path}: truncated or corrupt gzip file after line {self.line_number} "
                            f"({exc}); expected a complete .gz file") from None

    def __iter__(self) -> Iterator[str]:
        while raw := self._next_raw():
            self.line_number += 1
            text = self._decode(raw)
            self.byte_offset += len(raw)
            yield text

    def readline(self) -> str:
        """The next line with its newline, '' at the end of the file."""
        raw = self._next_raw()
        if not raw:
            return ""
        self.line_number += 1
        text = self._decode(raw)
        self.byte_offset += len(raw)
        return text

    def read(self) -> str:
        return "".join(self)

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> "Utf8Lines":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_text(path: str | Path) -> Utf8Lines:
    """``open(path, encoding="utf-8")`` (or gzip) whose decoding errors name file, line and byte offset."""
    return Utf8Lines(path)


def read_text(path: str | Path) -> str:
    """The whole file as text (``Path.read_text`` with precise decoding errors)."""
    with open_text(path) as handle:
        return handle.read()
