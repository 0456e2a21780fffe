"""CoNLL-U's integer columns (ID in column 1, HEAD in column 7), read one way by every reader that needs them: the
task readers (tasks/pos, tasks/edge_dep) and the structural probes' trees (elmo_bench/probe/lib/conllu_trees.py).

CoNLL-U writes these numbers in ASCII digits. ``str.isdigit()`` also says yes to ``"¹"`` (which ``int`` then refuses:
a traceback) and to Arabic-Indic ``"٣"`` (which ``int`` reads as 3: a number the file did not write as one); both
are refused here in one ``DataError`` naming the file, the line and what was expected.
"""
from __future__ import annotations

from elmo_bench.base.errors import DataError


def ascii_number(text: str) -> int | None:
    """``text`` as a non-negative integer when it is ASCII digits only (``"12"``), else None (``"¹"``, ``"٣"``, ``"-1"``)."""
    return int(text) if text.isascii() and text.isdigit() else None


def is_word_row(word_id: str) -> bool:
    """False for the rows that are no syntactic word: a multiword-token range (``3-4``) or an empty node (``8.1``)."""
    return "-" not in word_id and "." not in word_id


def word_id(text: str, where: str, expected: int | None = None) -> int:
    """Column 1 of a word's row: ASCII digits, and exactly ``expected`` when given (IDs count up from 1)."""
    number = ascii_number(text)
    if expected is not None and text != str(expected):
        raise DataError(f"{where}: expected word ID {expected} (IDs count up from 1), found {text!r}")
    if number is None:
        raise DataError(f"{where}: expected an integer word ID in column 1 (ASCII digits), found {text!r}")
    return number


def head_id(text: str, where: str) -> int:
    """Column 7 of a word's row: its HEAD in ASCII digits (0 = the root); the caller checks it names a word."""
    number = ascii_number(text)
    if number is None:
        raise DataError(f"{where}: expected an integer HEAD in column 7 (ASCII digits), found {text!r}")
    return number
