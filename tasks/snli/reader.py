"""Read SNLI 1.0 (official jsonl, optionally gzipped, or the hub name ``snli``) into examples.

Each example: ``{"id", "premise": list[str], "hypothesis": list[str], "label": str}``.
Pairs whose gold label is ``-`` (no annotator consensus) are dropped, as is the convention, and counted:
every reader returns ``(examples, n_dropped)`` so the caller can report the count.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import open_text as _open_text
from elmo_bench.tasks.api import Example

LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: the hub's ClassLabel names, in the order of the ``snli`` dataset card (0 entailment, 1 neutral, 2 contradiction)
HUB_LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: how the Stanford parser behind the binary parses spells brackets (PTB escapes)
PTB_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
REQUIRED_FIELDS: tuple[str, ...] = ("pairID", "sentence1", "sentence2", "gold_label")


def open_text(path: str | Path) -> TextIO:
    """Open a UTF-8 text file, transparently un-gzipping a ``.gz`` suffix."""
    return _open_text(path)  # decoding errors name the file, line and byte offset


def tokens_from_binary_parse(parse: str) -> list[str]:
    """``( ( Two women ) ( are ... ) )`` → ``["Two", "women", "are", ...]``: the PTB tokens of the parser."""
    return [t for t in parse.split() if t not in ("(", ")")]


@lru_cache(maxsize=1)
def _word_tokenizer() -> Any:
    from nltk.tokenize import NLTKWordTokenizer  # needs no downloaded NLTK data

    return NLTKWordTokenizer()


def ptb_tokenize(text: str) -> list[str]:
    """A raw sentence → Penn Treebank tokens as the SNLI binary parses have them ("eating." → "eating", ".";
    "(" → "-LRB-"). NLTK's Treebank tokenizer reproduces the parses' tokens for 99.94% of the sentences of the
    SNLI dev file and 99.92% of the test file (the rest are typos such as "work.." or "t.v.")."""
    return [PTB_BRACKETS.get(t, t) for t in _word_tokenizer().tokenize(text)]


def tokenize(record: dict[str, Any], which: str) -> list[str]:
    """Tokens of ``sentence1``/``sentence2``: from its binary parse when present (common practice), else the
    raw sentence through ``ptb_tokenize`` (what the hub copy, which has no parses, gets too)."""
    parse = record.get(f"{which}_binary_parse")
    if isinstance(parse, str) and parse.strip():
        tokens = tokens_from_binary_parse(parse)
        if tokens:
            return tokens
    return ptb_tokenize(str(record[which]))


def json_lines(path: str | Path, lines: Iterable[str], expected: str) -> Iterator[tuple[int, Any]]:
    """(1-based line number, parsed value) for every non-blank line of ``path``; DataError naming the line and
    ``expected`` on malformed JSON. The gold reader and the prediction-file scorer share it."""
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{line_no}: malformed JSON ({err.msg} at column {err.colno}); "
                            f"expected {expected}") from None
        yield line_no, value


def _iter_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line number, parsed JSON object) for every non-blank line; DataError on malformed JSON."""
    with open_text(path) as handle:
        for line_no, record in json_lines(path, handle, "one SNLI JSON object per line"):
            if not isinstance(record, dict):
                raise DataError(f"{path}:{line_no}: expected a JSON object, got {type(record).__name__}")
            yield line_no, record


def read_jsonl(path: str | Path) -> tuple[list[Example], int]:
    """Read an official ``snli_1.0_*.jsonl[.gz]`` file → (usable examples in file order, number dropped as ``-``)."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found; expected an SNLI 1.0 jsonl file")
    examples: list[Example] = []
    dropped = 0
    for line_no, record in _iter_records(path):
        for field in REQUIRED_FIELDS:
            if field not in record or record[field] is None:
                raise DataError(f"{path}:{line_no}: missing field '{field}' (pairID={record.get('pairID')!r}); "
                                f"expected fields {', '.join(REQUIRED_FIELDS)}")
        label = record["gold_label"]
        if label == "-":
            dropped += 1
            continue
        if label not in LABELS:
            raise DataError(f"{path}:{line_no}: gold_label {label!r} (pairID={record['pairID']!r}); "
                            f"expected one of {', '.join(LABELS)} or '-'")
        premise, hypothesis = tokenize(record, "sentence1"), tokenize(record, "sentence2")
        for name, toks in (("sentence1", premise), ("sentence2", hypothesis)):
            if not toks:
                raise DataError(f"{path}:{line_no}: field '{name}' is empty (pairID={record['pairID']!r}); "
                                f"expected at least one token")
        examples.append({"id": str(record["pairID"]), "premise": premise, "hypothesis": hypothesis, "label": label})
    return examples, dropped


def hub_records_to_examples(ds: Any, split: str) -> tuple[list[Example], int]:
    """Examples from one split of the hub dataset ``snli`` (premise, hypothesis, ClassLabel ``label`` where -1 =
    no consensus, dropped and counted). The hub has raw sentences only: they go through ``ptb_tokenize`` so the
    tokens match the file reader's binary-parse tokens. The hub has no pairID: ids are ``<split>-<row>``."""
    names = tuple(getattr(ds.features.get("label"), "names", ()) or HUB_LABELS)
    if set(names) != set(LABELS):
        raise DataError(f"hub split {split}: label names {list(names)}; expected {', '.join(LABELS)}")
    examples: list[Example] = []
    dropped = 0
    for i, row in enumerate(ds):
        if row["label"] is None or row["label"] < 0:
            dropped += 1
            continue
        premise, hypothesis = ptb_tokenize(row["premise"]), ptb_tokenize(row["hypothesis"])
        if not premise or not hypothesis:
            raise DataError(f"hub split {split} record {i}: empty premise or hypothesis; expected at least one token")
        examples.append({"id": f"{split}-{i}", "premise": premise, "hypothesis": hypothesis,
                         "label": names[row["label"]]})
    return examples, dropped
