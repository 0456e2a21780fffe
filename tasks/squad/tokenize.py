"""A regex tokeniser that keeps character offsets, so answer spans map to tokens and back to exact context text.

Tokens: numbers with inner separators (``1,000``, ``3.5``), runs of word characters, or one punctuation/symbol
character each. Whitespace and zero-width format characters separate tokens and never belong to one.
"""
from __future__ import annotations

import re

TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)+|\w+|[^\w\s\u200b-\u200f\u2060\ufeff]")

Span = tuple[int, int]


def tokenize_with_offsets(text: str) -> tuple[list[str], list[Span]]:
    """``text`` → (tokens, offsets) where ``text[start:end] == token`` for each (start, end) (end exclusive)."""
    tokens: list[str] = []
    offsets: list[Span] = []
    for match in TOKEN_RE.finditer(text):
        tokens.append(match.group())
        offsets.append((match.start(), match.end()))
    return tokens, offsets


def char_span_to_tokens(offsets: list[Span], start: int, end: int) -> Span | None:
    """Token span (first, last), inclusive, of the tokens overlapping chars [start, end); None when none overlap."""
    first = last = None
    for i, (s, e) in enumerate(offsets):
        if s < end and e > start:
            if first is None:
                first = i
            last = i
        elif s >= end:
            break
    return None if first is None else (first, last)
