"""Conversions between CoNLL start-end bracket columns, labelled spans and BIO tags.

A proposition's arguments are written in the CoNLL-2005 props files as one bracket tag per word: ``(A0*`` opens an
A0 argument, ``*)`` closes it, ``(V*)`` is a one-word V, ``*`` is inside/outside. The CoNLL-2004 style repeats
the label on the closing side (``(A1*A1)``, ``*A1)``); both are accepted. The model works on BIO tags, one label
per word, so arguments of one proposition must not nest; nesting is rejected here (it never occurs in CoNLL-2005).
"""
from __future__ import annotations

import re
from typing import Sequence

from elmo_bench.base.errors import DataError

Span = tuple[str, int, int]  # (label, start, end), end inclusive

_TAG = re.compile(r"^(?:\(([^*()]+))?\*(?:([^*()]*)\))?$")


def brackets_to_spans(tags: Sequence[str], where: Sequence[str]) -> list[Span]:
    """Parse one bracket column into labelled spans.

    ``where[i]`` names the file and line of ``tags[i]`` for error messages. Raises DataError on a tag that is not
    ``(X*``, ``*``, ``*)``, ``*X)``, ``(X*)`` or ``(X*X)``, on a close without an open, on an open while another
    argument is open (nesting), on a closing label that differs from the open one, and on an unclosed argument.
    """
    spans: list[Span] = []
    open_label: str | None = None
    open_start = -1
    for i, tag in enumerate(tags):
        m = _TAG.match(tag)
        if m is None:
            raise DataError(f"{where[i]}: bad bracket tag {tag!r}; expected '(X*', '*', '*)' or '(X*)'")
        label, close = m.group(1), m.group(2)
        if label is not None:
            if open_label is not None:
                raise DataError(f"{where[i]}: argument {label!r} opens inside open argument {open_label!r} "
                                f"(nested arguments are not allowed)")
            open_label, open_start = label, i
        if close is not None:
            if open_label is None:
                raise DataError(f"{where[i]}: closing bracket {tag!r} without an open argument")
            if close and close != open_label:
                raise DataError(f"{where[i]}: closing label {close!r} does not match open argument {open_label!r}")
            spans.append((open_label, open_start, i))
            open_label = None
    if open_label is not None:
        raise DataError(f"{where[open_start]}: argument {open_label!r} is never closed (sentence ends)")
    return spans


def spans_to_bio(spans: Sequence[Span], length: int) -> list[str]:
    """Labelled non-overlapping spans → BIO tags of ``length`` words."""
    tags = ["O"] * length
    for label, start, end in spans:
        tags[start] = f"B-{label}"
        for i in range(start + 1, end + 1):
            tags[i] = f"I-{label}"
    return tags


def bio_to_spans(tags: Sequence[str]) -> list[Span]:
    """BIO tags → labelled spans. An ``I-X`` that does not continue an X span starts a new one (lenient, so an
    unconstrained decoder's output can still be scored)."""
    spans: list[Span] = []
    label: str | None = None
    start = 0
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, _, typ = tag.partition("-")
        continues = prefix == "I" and typ == label
        if label is not None and not continues:
            spans.append((label, start, i - 1))
            label = None
        if prefix == "B" or (prefix == "I" and not continues):
            label, start = typ, i
    return spans


def spans_to_brackets(spans: Sequence[Span], length: int) -> list[str]:
    """Labelled non-overlapping spans → one bracket column (``(X*``, ``*``, ``*)``, ``(X*)``)."""
    tags = ["*"] * length
    for label, start, end in spans:
        if start == end:
            tags[start] = f"({label}*)"
        else:
            tags[start] = f"({label}*"
            tags[end] = "*)"
    return tags
