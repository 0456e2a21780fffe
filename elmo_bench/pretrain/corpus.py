"""LM training text: files of one tokenised sentence a line, and a `prepare` step that makes them from raw text.

Input files may be plain text or ``.gz``; arguments may be globs. Every problem (missing path, empty file, a file
that is not UTF-8 text) raises :class:`DataError` naming the file (and the line where there is one).

``prepare`` turns raw running text (paragraphs separated by blank lines, hard-wrapped lines, as in Project
Gutenberg) into one sentence a line, tokenised with sacremoses' Moses tokenizer (the 1B Word Benchmark, ELMo's
training corpus, is Moses-tokenised). sacremoses has no sentence splitter, so a small rule-based one is used:
split after ``.``, ``!`` or ``?`` (plus any closing quotes/brackets) when the next word starts with an upper-case
letter, a digit or an opening quote, unless the period ends a known abbreviation such as ``Mr.``.
"""
from __future__ import annotations

import glob
import gzip
import re
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from elmo_bench.base.errors import DataError

_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "st", "mt", "messrs", "mme", "mlle", "prof", "rev", "col", "gen", "capt", "lt", "sgt",
    "sr", "jr", "esq", "hon", "gov", "no", "vol", "ch", "fig", "vs", "etc", "cf", "viz", "ibid", "co", "inc", "ltd",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "i.e", "e.g", "a.m", "p.m",
}
# End punctuation, optional closing quotes/brackets, whitespace, then something that can start a sentence.
_BOUNDARY = re.compile(r"([.!?]+[\"'\u201d\u2019)\]]*)\s+(?=[\"'\u201c\u2018(\[]*[A-Z0-9])")


def expand_paths(patterns: str | Sequence[str]) -> list[Path]:
    """Glob patterns or paths → sorted existing files; a pattern matching nothing is an error."""
    if isinstance(patterns, (str, Path)):
        patterns = [str(patterns)]
    files: list[Path] = []
    for pattern in patterns:
        pattern = str(pattern)
        matches = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
        if not matches:
            raise DataError(f"{pattern}: no file matches this pattern")
        for match in matches:
            path = Path(match)
            if not path.exists():
                raise DataError(f"{path}: corpus file not found")
            if path.is_dir():
                raise DataError(f"{path}: expected a text file, found a directory")
            files.append(path)
    return files


def open_text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number from 1, line without newline) of a UTF-8 text file, gzipped or not."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if b"\x00" in raw:
                    raise DataError(f"{path}: line {number}: binary data (NUL byte); expected UTF-8 text")
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DataError(f"{path}: line {number}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
                yield number, line.rstrip("\r\n")
    except (OSError, EOFError) as exc:  # bad gzip stream, unreadable file
        raise DataError(f"{path}: cannot read ({exc})") from None


def read_sentences(paths: str | Sequence[str]) -> Iterator[list[str]]:
    """Whitespace-tokenised sentences (blank lines skipped) from every file; a file with none is an error."""
    for path in expand_paths(paths):
        found = False
        for _, line in open_text_lines(path):
            tokens = line.split()
            if tokens:
                found = True
                yield tokens
        if not found:
            raise DataError(f"{path}: empty corpus file; expected one whitespace-tokenised sentence a line")


def split_sentences(paragraph: str) -> list[str]:
    """Split one paragraph (already joined into a single line) into sentences."""
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(paragraph):
        end = match.end(1)
        words = paragraph[start:end].split()
        last = words[-1].rstrip(".!?\"'\u201d\u2019)]").lower().lstrip("\"'\u201c\u2018([") if words else ""
        if match.group(1).startswith(".") and len(match.group(1).rstrip("\"'\u201d\u2019)]")) == 1 and (
                last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())):
            continue  # "Mr. Smith", "J. Smith": not a boundary
        pieces.append(paragraph[start:end].strip())
        start = match.end()
    tail = paragraph[start:].strip()
    if tail:
        pieces.append(tail)
    return [p for p in pieces if p]


def paragraphs(lines: Iterable[str]) -> Iterator[str]:
    """Join hard-wrapped lines into paragraphs separated by blank lines."""
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line.strip())
        elif current:
            yield " ".join(current)
            current = []
    if current:
        yield " ".join(current)


class Tokenizer:
    """Moses tokenisation (sacremoses), no XML escaping; ``--`` dashes split off as their own token."""

    def __init__(self, lang: str = "en") -> None:
        from sacremoses import MosesTokenizer

        self._moses = MosesTokenizer(lang=lang)

    def __call__(self, sentence: str) -> list[str]:
        sentence = re.sub(r"-{2,}|\u2014|\u2013", " -- ", sentence)
        return self._moses.tokenize(sentence, escape=False)


def prepare_lines(lines: Iterable[str], tokenizer: Tokenizer | None = None) -> Iterator[str]:
    """Raw running text lines → tokenised sentences, one string per sentence."""
    tokenizer = tokenizer or Tokenizer()
    for paragraph in paragraphs(lines):
        for sentence in split_sentences(paragraph):
            tokens = tokenizer(sentence)
            if tokens:
                yield " ".join(tokens)


def prepare(inputs: str | Sequence[str], output: str | Path, exclude: Iterable[str] = ()) -> dict[str, int]:
    """Prepare raw text files (globs, .gz) into one tokenised-sentence-a-line file (gzip if it ends in .gz).

    ``exclude``: file names (or their stems before ``.txt``) to leave out, e.g. evaluation novels.
    Returns counts of files, sentences and tokens written.
    """
    from elmo_bench.base.atomic import atomic_path

    skip = {name.split(".txt")[0] for name in exclude}
    files = [p for p in expand_paths(inputs) if p.name.split(".txt")[0] not in skip]
    if not files:
        raise DataError(f"{inputs}: every input file is excluded; nothing to prepare")
    tokenizer = Tokenizer()
    stats = {"files": 0, "sentences": 0, "tokens": 0}
    output = Path(output)
    with atomic_path(output) as tmp:
        opener = gzip.open if output.suffix == ".gz" else open
        with opener(tmp, "wt", encoding="utf-8") as out:
            for path in files:
                lines = (line for _, line in open_text_lines(path))
                written = 0
                for sentence in prepare_lines(lines, tokenizer):
                    out.write(sentence + "\n")
                    written += 1
                    stats["tokens"] += sentence.count(" ") + 1
                if written == 0:
                    raise DataError(f"{path}: empty input file; expected raw English text")
                stats["sentences"] += written
                stats["files"] += 1
    return stats


def litbank_eval_books(splits_dir: str | Path, fold: int = 0, parts: Sequence[str] = ("dev", "test")) -> list[str]:
    """Gutenberg file stems (``1023_bleak_house``) of the LitBank coref documents of one fold's ``parts``.

    The coref split files list ``<id>_<title>_brat.tsv`` names, one a line.
    """
    stems: list[str] = []
    for part in parts:
        path = Path(splits_dir) / str(fold) / f"{part}.ids"
        if not path.exists():
            raise DataError(f"{path}: LitBank split file not found")
        for number, line in open_text_lines(path):
            name = line.strip()
            if not name:
                continue
            if not name.endswith("_brat.tsv"):
                raise DataError(f"{path}: line {number}: expected '<id>_<title>_brat.tsv', found {name!r}")
            stems.append(name[: -len("_brat.tsv")])
    return stems
