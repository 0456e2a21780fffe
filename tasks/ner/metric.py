"""Entity-level precision / recall / F1 with the exact semantics of CoNLL's ``conlleval`` script.

Chunks are found with conlleval's ``startOfChunk`` / ``endOfChunk`` rules, so IOB1, IOB2 (BIO) and IOE tags, or a
mix of them, are read exactly as conlleval reads them: an ``I-X`` after ``O`` (or after another type) starts a
chunk, ``B-X`` after ``I-X``/``B-X`` starts a new one, a type change ends a chunk. A predicted chunk is correct when
it starts and ends at the same tokens as a gold chunk, with the same type. Scores are percentages (full floats;
conlleval prints them with two decimals).

Input files (``score_files``) are conlleval's input format: whitespace-separated columns, the last two being the gold
and the predicted tag, a blank line between sentences. As in conlleval, a line whose first column is ``-X-`` is a
boundary; every other line (``-DOCSTART-`` lines included) is a token with the tags in its last two columns, so a
``-DOCSTART- -X- O O O`` line ends chunks exactly like a boundary does. Every non-blank line must have the same
number of columns (conlleval stops with an error otherwise).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import open_text

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


def sentence_rows(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> Iterable[Row]:
    """Rows for sentences of tags, with a boundary after each sentence (as in a conlleval input file)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted")
    for i, (g, p) in enumerate(zip(gold, predicted)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(g)} gold tags but {len(p)} predicted")
        for gt, pt in zip(g, p):
            yield ("x", gt, pt)
        yield None


def score_sentences(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> dict[str, float]:
    """conlleval's precision / recall / F1 (percent) for lists of tag sequences."""
    return count_chunks(sentence_rows(gold, predicted)).scores()


def read_rows(paths: Sequence[str | Path]) -> Iterable[Row]:
    """Rows of conlleval input files, read one after the other as if concatenated."""
    n_cols = -1
    for path in paths:
        with open_text(path) as handle:
            for lineno, line in enumerate(handle, start=1):
                cols = line.split()
                if not cols:
                    yield None
                    continue
                if n_cols < 0:
                    n_cols = len(cols)
                elif len(cols) != n_cols:
                    raise DataError(f"{path}:{lineno}: expected {n_cols} columns like the first line, got {len(cols)}")
                if cols[0] == BOUNDARY:
                    yield None
                elif len(cols) < 2:
                    raise DataError(f"{path}:{lineno}: expected columns '... gold predicted', got 1 column")
                else:  # with only two columns conlleval's first item is undefined, i.e. never a boundary
                    yield (cols[0] if len(cols) > 2 else "", cols[-2], cols[-1])


def score_files(*paths: str) -> dict[str, float]:
    """Score conlleval-format files: {"precision": P, "recall": R, "f1": F} in percent, as conlleval computes them."""
    if not paths:
        raise ValueError("score_files needs at least one file in conlleval's format")
    rows = list(read_rows(paths))
    if not any(row is not None for row in rows):
        raise DataError(f"{', '.join(map(str, paths))}: no tagged tokens; expected conlleval lines "
                        f"'token gold predicted'")
    return count_chunks(rows).scores()


def conlleval_lines(tokens: Sequence[Sequence[str]], gold: Sequence[Sequence[str]],
                    predicted: Sequence[Sequence[str]]) -> list[str]:
    """Lines of a conlleval input file (``token gold predicted``, blank line after each sentence)."""
    lines: list[str] = []
    for toks, g, p in zip(tokens, gold, predicted):
        lines.extend(f"{t} {gt} {pt}" for t, gt, pt in zip(toks, g, p))
        lines.append("")
    return lines
