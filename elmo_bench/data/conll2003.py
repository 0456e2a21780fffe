"""The CoNLL-2003 format, read one way by every task that reads it (the NER task, tasks/ner; edge_ner's entity spans
and edge_chunk's IOB check and span walk): the four-column files (``word POS chunk NER``).

Tag scheme: the official files use IOB1 (``I-`` everywhere, ``B-`` only between two adjacent entities of the
same type). The CRF is trained on **BIO (IOB2)**: every entity starts with ``B-``. ``iob1_to_bio`` converts;
it is idempotent, so files already in BIO pass unchanged. Each example keeps the converted tags in ``tags``.

``-DOCSTART-`` lines are document separators, skipped wherever they occur (this copy has the first one moved to
the end of each file, with no final newline).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import open_text

_TAG = re.compile(r"^(O|[BI]-[^\s-][^\s]*)$")
N_COLUMNS = 4


def check_tag(tag: str) -> bool:
    """True for ``O``, ``B-TYPE`` or ``I-TYPE``."""
    return bool(_TAG.match(tag))


def iob1_to_bio(tags: Sequence[str]) -> list[str]:
    """IOB1 (or BIO) → BIO: an ``I-X`` that does not continue an ``X`` entity becomes ``B-X``."""
    out: list[str] = []
    prev = "O"
    for tag in tags:
        if tag.startswith("I-") and (prev == "O" or prev[2:] != tag[2:]):
            tag = "B-" + tag[2:]
        out.append(tag)
        prev = tag
    return out


def read_conll(path: str | Path, split: str = "data") -> list[dict[str, Any]]:
    """Read one CoNLL-2003 file into examples ``{"id", "tokens", "pos_tags", "chunk", "tags"}`` (tags in BIO).

    Raises DataError naming the file and line on a row without 4 columns or with a malformed NER tag.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found (expected a CoNLL-2003 file with columns 'word POS chunk NER')")
    examples: list[dict[str, Any]] = []
    rows: list[list[str]] = []

    def flush() -> None:
        if rows:
            examples.append(
                {
                    "id": f"{split}-{len(examples)}",
                    "tokens": [r[0] for r in rows],
                    "pos_tags": [r[1] for r in rows],
                    "chunk": [r[2] for r in rows],
                    "tags": iob1_to_bio([r[3] for r in rows]),
                }
            )
            rows.clear()

    with open_text(path) as handle:  # decoding errors name the file, line and byte offset
        for lineno, line in enumerate(handle, start=1):
            cols = line.split()
            if not cols:
                flush()
                continue
            if cols[0] == "-DOCSTART-":
                flush()
                continue
            if len(cols) != N_COLUMNS:
                raise DataError(
                    f"{path}:{lineno}: expected {N_COLUMNS} columns 'word POS chunk NER', got {len(cols)}: {line.strip()!r}"
                )
            if not check_tag(cols[3]):
                raise DataError(f"{path}:{lineno}: bad NER tag {cols[3]!r} (expected O, B-TYPE or I-TYPE)")
            rows.append(cols)
    flush()
    return examples


def iter_entities(tags: Sequence[str]) -> Iterator[tuple[str, int, int]]:
    """Entity spans ``(type, start, end_exclusive)`` of a BIO sequence (used for counts, not for scoring)."""
    start, kind = -1, ""
    for i, tag in enumerate(list(tags) + ["O"]):
        if start >= 0 and (tag == "O" or tag.startswith("B-") or tag[2:] != kind):
            yield kind, start, i
            start = -1
        if tag != "O" and start < 0:
            start, kind = i, tag[2:]
