"""Entity-level precision / recall / F1 as CoNLL's ``conlleval`` script computes them, with chunks found by seqeval.

Chunks come from ``seqeval.metrics.sequence_labeling.get_entities``, seqeval's default (conlleval-compatible) mode:
IOB1, IOB2 (BIO) and IOE tags, or a mix of them, are read as conlleval reads them: an ``I-X`` after ``O`` (or after
another type) starts a chunk, ``B-X`` after ``I-X``/``B-X`` starts a new one, a type change ends a chunk. A predicted
chunk is correct when it has the same type, start and end as a gold chunk. Scores are percentages (full floats;
conlleval prints them with two decimals); conlleval's zeros where nothing was guessed or there is no gold.

Where seqeval and conlleval differ, this module keeps conlleval's number (the numbers the CoNLL-2003 literature and
the paper report), and tests/test_ner_metric.py shows each case:

- Not seqeval's ``mode="strict"`` (``scheme=IOB2``): strict mode drops chunks that are invalid in the scheme, so the
  CoNLL-2003 gold (IOB1: ``I-PER`` after ``O`` starts an entity) and a model's stray ``I-X`` after ``O`` would lose
  entities that conlleval counts.
- Tag split: conlleval splits a tag at its first dash and reads the type ``0`` as no type (Perl's false string);
  seqeval would keep ``0`` as a type. Tags are rewritten to seqeval's ``P-TYPE`` form after conlleval's split.
- ``E-X`` directly followed by ``B-X`` (same type): seqeval ends a chunk after every ``E`` and starts one at every
  ``B``; conlleval does neither here (its ``endOfChunk``/``startOfChunk`` lack that pair), so the two tokens stay in
  one chunk. Both tags are handed to seqeval as ``I-X``, which seqeval reads exactly as conlleval reads the pair.
- Prefixes other than ``B``, ``I``, ``E``, ``O`` (IOBES ``S-``, conlleval's bracket tags ``[``/``]``, ``.``): the two
  disagree and conlleval's reading of ``S-`` is not IOBES's, so such files are refused (DataError naming the line).

Input files (``score_files``) are conlleval's input format: whitespace-separated columns, the last two being the gold
and the predicted tag, a blank line between sentences. As in conlleval, a line whose first column is ``-X-`` is a
boundary; every other line (``-DOCSTART-`` lines included) is a token with the tags in its last two columns, so a
``-DOCSTART- -X- O O`` line ends chunks exactly like a boundary does. Every non-blank line must have the same
number of columns (conlleval stops with an error otherwise).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional, Sequence

from seqeval.metrics.sequence_labeling import get_entities

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import open_text

BOUNDARY = "-X-"
PREFIXES = ("B", "I", "E", "O")  # IOB1, IOB2 and IOE: where seqeval's default mode reads tags as conlleval does

# A row is (first column, gold tag, predicted tag, where: (file, line) or (sentence, token)); None = a boundary.
Row = Optional[tuple[str, str, str, tuple[object, int]]]


@lru_cache(maxsize=4096)
def _split(tag: str) -> tuple[str, str] | None:
    prefix, dash, kind = tag.partition("-")
    if prefix not in PREFIXES:
        return None
    return prefix, ("" if not dash or kind == "0" else kind)  # Perl reads the type "0" as false, i.e. as no type


def split_tag(tag: str, where: tuple[object, int] | None = None) -> tuple[str, str]:
    """conlleval's tag split: the prefix before the first dash and the type after it (types may hold dashes)."""
    found = _split(tag)
    if found is None:
        place = "tag" if where is None else (f"{where[0]}:{where[1]}" if isinstance(where[0], (str, Path))
                                             else f"sentence {where[0]}, token {where[1]}")
        raise DataError(f"{place}: expected an NER tag B-TYPE, I-TYPE, E-TYPE or O (IOB1, IOB2 or IOE), got {tag!r}")
    return found


def seqeval_tags(tags: Sequence[tuple[str, str]]) -> list[str]:
    """Split tags as seqeval's ``get_entities`` must see them to find conlleval's chunks (see the module docstring)."""
    out = [f"{prefix}-{kind}" if kind else prefix for prefix, kind in tags]
    for i in range(1, len(tags)):
        if tags[i - 1][0] == "E" and tags[i][0] == "B" and tags[i - 1][1] == tags[i][1]:
            out[i - 1] = out[i] = f"I-{tags[i][1]}" if tags[i][1] else "I"
    return out


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


def chunks(sentences: Sequence[Sequence[str]]) -> dict[str, set[tuple[int, int]]]:
    """seqeval's chunks of tag sentences, by type: ``{type: {(start, end), ...}}`` (offsets over all sentences)."""
    found: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for kind, start, end in get_entities([list(s) for s in sentences]):
        found[kind].add((start, end))
    return found


def count_chunks(rows: Iterable[Row]) -> ChunkCounts:
    """conlleval's counters over rows (``None`` = boundary line), the chunks found by seqeval."""
    c = ChunkCounts()
    gold: list[list[str]] = [[]]
    guess: list[list[str]] = [[]]
    gold_split: list[tuple[str, str]] = []
    guess_split: list[tuple[str, str]] = []

    def end_sentence() -> None:
        gold[-1], guess[-1] = seqeval_tags(gold_split), seqeval_tags(guess_split)
        gold.append([])
        guess.append([])
        gold_split.clear()
        guess_split.clear()

    for row in rows:
        if row is None:
            end_sentence()
            continue
        _, gold_tag, guess_tag, where = row
        g, p = split_tag(gold_tag, where), split_tag(guess_tag, where)
        gold_split.append(g)
        guess_split.append(p)
        c.correct_tags += g == p
        c.tokens += 1
    end_sentence()
    gold_chunks, guess_chunks = chunks(gold), chunks(guess)
    c.gold_chunks = sum(map(len, gold_chunks.values()))
    c.guessed_chunks = sum(map(len, guess_chunks.values()))
    c.correct_chunks = sum(len(spans & gold_chunks.get(kind, set())) for kind, spans in guess_chunks.items())
    return c


def sentence_rows(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> Iterable[Row]:
    """Rows for sentences of tags, with a boundary after each sentence (as in a conlleval input file)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted")
    for i, (g, p) in enumerate(zip(gold, predicted)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(g)} gold tags but {len(p)} predicted")
        for j, (gt, pt) in enumerate(zip(g, p)):
            yield ("x", gt, pt, (i, j))
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
                    yield (cols[0] if len(cols) > 2 else "", cols[-2], cols[-1], (str(path), lineno))


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
