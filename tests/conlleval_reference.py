"""Test oracle: the hand-written port of conlleval's chunk rules that tasks/ner/metric.py used before it moved to
seqeval (its ``count_chunks`` main loop, ``startOfChunk``/``endOfChunk`` and tag split, unchanged). The NER metric
tests compare the seqeval-based metric with it on hand-made, random and real CoNLL-2003 sequences; it is not used
by the package.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

BOUNDARY = "-X-"

# A row is (first column, gold tag, predicted tag); None stands for a sentence boundary.
Row = Optional[tuple[str, str, str]]


def _split(tag: str) -> tuple[str, str]:
    """conlleval's tag split: the prefix before the first dash and the type after it (types may hold dashes)."""
    prefix, dash, kind = tag.partition("-")
    if not dash:
        return tag, ""
    return prefix, ("" if kind == "0" else kind)  # Perl reads the type "0" as false, i.e. as no type


def end_of_chunk(prev_tag: str, tag: str, prev_type: str, kind: str) -> bool:
    """conlleval's ``endOfChunk``: does a chunk end between the previous token and this one?"""
    if (prev_tag, tag) in {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"), ("E", "E"), ("E", "I"), ("E", "O")}:
        return True
    if prev_tag not in ("O", ".") and prev_type != kind:
        return True
    return prev_tag in ("]", "[")


def start_of_chunk(prev_tag: str, tag: str, prev_type: str, kind: str) -> bool:
    """conlleval's ``startOfChunk``: does a chunk start at this token?"""
    if (prev_tag, tag) in {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"), ("E", "E"), ("E", "I"), ("O", "E")}:
        return True
    if tag not in ("O", ".") and prev_type != kind:
        return True
    return tag in ("[", "]")


@dataclass
class ChunkCounts:
    """The counters conlleval keeps."""

    correct_chunks: int = 0
    gold_chunks: int = 0
    guessed_chunks: int = 0
    correct_tags: int = 0
    tokens: int = 0

    def scores(self) -> dict[str, float]:
        """{"precision", "recall", "f1"} in percent; 0 where conlleval prints 0 (nothing guessed / no gold)."""
        p = 100.0 * self.correct_chunks / self.guessed_chunks if self.guessed_chunks else 0.0
        r = 100.0 * self.correct_chunks / self.gold_chunks if self.gold_chunks else 0.0
        f = 2 * p * r / (p + r) if p + r > 0 else 0.0
        return {"precision": p, "recall": r, "f1": f}


def count_chunks(rows: Iterable[Row]) -> ChunkCounts:
    """Run conlleval's main loop over rows (``None`` = boundary line)."""
    c = ChunkCounts()
    in_correct = False
    last_gold, last_guess, last_gold_type, last_guess_type = "O", "O", "", ""
    for row in rows:
        first, gold_tag, guess_tag = row if row is not None else (BOUNDARY, "O", "O")
        gold, gold_type = _split(gold_tag)
        guess, guess_type = _split(guess_tag)
        if first == BOUNDARY:
            guess = "O"
        gold_end = end_of_chunk(last_gold, gold, last_gold_type, gold_type)
        guess_end = end_of_chunk(last_guess, guess, last_guess_type, guess_type)
        if in_correct:
            if gold_end and guess_end and last_guess_type == last_gold_type:
                in_correct = False
                c.correct_chunks += 1
            elif gold_end != guess_end or guess_type != gold_type:
                in_correct = False
        gold_start = start_of_chunk(last_gold, gold, last_gold_type, gold_type)
        guess_start = start_of_chunk(last_guess, guess, last_guess_type, guess_type)
        if gold_start and guess_start and guess_type == gold_type:
            in_correct = True
        c.gold_chunks += gold_start
        c.guessed_chunks += guess_start
        if first != BOUNDARY:
            c.correct_tags += gold == guess and guess_type == gold_type
            c.tokens += 1
        last_gold, last_guess, last_gold_type, last_guess_type = gold, guess, gold_type, guess_type
    if in_correct:
        c.correct_chunks += 1
    return c
