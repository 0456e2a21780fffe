"""Read SNLI 1.0 (official jsonl, optionally gzipped, or the hub name ``snli``) into examples.

Each example: ``{"id", "premise": list[str], "hypothesis": list[str], "label": str}``.
Pairs whose gold label is ``-`` (no annotator consensus) are dropped, as is the convention, and counted:
every reader returns ``(examples, n_dropped)`` so the caller can report the count.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, TextIO

from elmo_bench.errors import DataError
from elmo_bench.textio import open_text as _open_text

LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: the hub's integer labels, in the order the ``snli`` dataset card gives them
HUB_LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
REQUIRED_FIELDS: tuple[str, ...] = ("pairID", "sentence1", "sentence2", "gold_label")

Example = dict[str, Any]


def open_text(path: str | Path) -> TextIO:
    """Open a UTF-8 text file, transparently un-gzipping a ``.gz`` suffix."""
    return _open_text(path)  # decoding errors name the file, line and byte offset


def tokens_from_binary_parse(parse: str) -> list[str]:
    """``( ( Two women ) ( are ... ) )`` → ``["Two", "women", "are", ...]``: the PTB tokens of the parser."""
    return [t for t in parse.split() if t not in ("(", ")")]


def tokenize(record: dict[str, Any], which: str) -> list[str]:
    """Tokens of ``sentence1``/``sentence2``: from its binary parse when present (common practice), else a
    whitespace split of the raw sentence."""
    parse = record.get(f"{which}_binary_parse")
    if isinstance(parse, str) and parse.strip():
        tokens = tokens_from_binary_parse(parse)
        if tokens:
            return tokens
    return str(record[which]).split()


def _iter_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line number, parsed JSON object) for every non-blank line; DataError on malformed JSON."""
    with open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{path}:{line_no}: malformed JSON ({err.msg} at column {err.colno}); "
                                f"expected one SNLI JSON object per line") from None
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


def read_hub(hub_name: str, split: str) -> tuple[list[Example], int]:
    """Read one split of the hub dataset (fields premise/hypothesis/label, label -1 = no consensus, dropped).

    Whitespace tokenisation: the hub copy carries no parses.
    """
    import datasets  # deferred: heavy import, and only this code path needs it

    rows = datasets.load_dataset(hub_name, split=split)
    examples: list[Example] = []
    dropped = 0
    for i, row in enumerate(rows):
        if row["label"] == -1:
            dropped += 1
            continue
        examples.append({"id": f"{split}-{i}", "premise": row["premise"].split(),
                         "hypothesis": row["hypothesis"].split(), "label": HUB_LABELS[row["label"]]})
    return examples, dropped
