"""CoNLL-U, read one way by every reader that needs it: the tagged sentences (:func:`read_conllu`: the POS task,
edge_pos, the tagging probes) and the integer columns (ID in column 1, HEAD in column 7: the task readers and the
structural probes' trees, elmo_bench/probe/lib/conllu_trees.py). ``#`` lines are comments (``# sent_id`` names the
example); multiword-token ranges (``3-4``) and empty nodes (``8.1``) are skipped, so the tokens are the syntactic
words that carry the tags.

CoNLL-U writes these numbers in ASCII digits. ``str.isdigit()`` also says yes to ``"¹"`` (which ``int`` then refuses:
a traceback) and to Arabic-Indic ``"٣"`` (which ``int`` reads as 3: a number the file did not write as one); both
are refused here in one ``DataError`` naming the file, the line and what was expected.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import open_text

#: the columns a tagged example's tags come from
TAG_COLUMNS = {"upos": 3, "xpos": 4}


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


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """A text file's lines, numbered from 1, without their line ends (decoding errors name the file and line)."""
    with open_text(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            yield lineno, line.rstrip("\n")


def missing_file(path: Path, expected: str) -> DataError:
    """The one line for a file that is not there, saying what was expected."""
    return DataError(f"{path}: file not found (expected {expected})")


def read_conllu(path: str | Path, tag_column: str = "xpos", split: str = "data") -> list[dict[str, Any]]:
    """One CoNLL-U file → examples ``{"id", "tokens", "tags"}`` (tags from ``tag_column``: xpos or upos)."""
    path = Path(path)
    if tag_column not in TAG_COLUMNS:
        raise ValueError(f"tag_column expected one of {sorted(TAG_COLUMNS)}, found {tag_column!r}")
    if not path.exists():
        raise missing_file(path, "a CoNLL-U file with 10 tab-separated columns")
    column = TAG_COLUMNS[tag_column]
    examples: list[dict[str, Any]] = []
    tokens: list[str] = []
    tags: list[str] = []
    sent_id: str | None = None

    def flush() -> None:
        nonlocal sent_id
        if tokens:
            examples.append({"id": sent_id or f"{split}-{len(examples)}", "tokens": list(tokens), "tags": list(tags)})
        tokens.clear()
        tags.clear()
        sent_id = None

    for lineno, line in numbered_lines(path):
        if not line.strip():
            flush()
            continue
        if line.startswith("#"):
            if line.startswith("# sent_id") and "=" in line:
                sent_id = line.split("=", 1)[1].strip()
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise DataError(f"{path}:{lineno}: expected 10 tab-separated CoNLL-U columns, found {len(cols)}: {line[:80]!r}")
        if not is_word_row(cols[0]):  # multiword-token range or empty node: no tag of its own
            continue
        word_id(cols[0], f"{path}:{lineno}")  # ASCII digits, as the structural probes' reader takes them
        if not cols[1] or cols[column] in ("", "_"):
            raise DataError(f"{path}:{lineno}: word {cols[0]} has no form or no {tag_column.upper()} tag: {line[:80]!r}")
        tokens.append(cols[1])
        tags.append(cols[column])
    flush()
    return examples
