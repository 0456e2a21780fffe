"""Reading UTF-8 text files so that undecodable bytes become one DataError naming the file, line and byte offset.

Readers and scorers call :func:`open_text` where they would call ``open(path, encoding="utf-8")`` (``.gz`` files
are decompressed). The file is decoded line by line from bytes, so the error can say where the bad byte is.
"""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import IO, Iterator

from elmo_bench.base.errors import DataError


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
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"{self.path}: line {self.line_number}: byte offset {self.byte_offset + exc.start}: "
                            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); expected UTF-8 text") from None

    def __iter__(self) -> Iterator[str]:
        for raw in self._raw:
            self.line_number += 1
            text = self._decode(raw)
            self.byte_offset += len(raw)
            yield text

    def readline(self) -> str:
        """The next line with its newline, '' at the end of the file."""
        raw = self._raw.readline()
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
