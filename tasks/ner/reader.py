"""CoNLL-2003 reader: the four-column files (``word POS chunk NER``) or the hub dataset ``conll2003``.

Tag scheme: the official files use IOB1 (``I-`` everywhere, ``B-`` only between two adjacent entities of the
same type). The CRF is trained on **BIO (IOB2)**: every entity starts with ``B-``. ``iob1_to_bio`` converts;
it is idempotent, so files already in BIO pass unchanged. Each example keeps the converted tags in ``tags``.

``-DOCSTART-`` lines are document separators, skipped wherever they occur (this copy has the first one moved to
the end of each file, with no final newline).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.splits import read_splits as shared_read_splits
from elmo_bench.data.textio import open_text
from elmo_bench.tasks.api import Example

_TAG = re.compile(r"^(O|[BI]-[^\s-][^\s]*)$")
N_COLUMNS = 4


def check_tag(tag: str) -> bool:
    """True for ``O``, ``B-TYPE`` or ``I-TYPE``."""
    return bool(_TAG.match(tag))


def iob1_to_bio(tags: Sequence[str]) -> list[str]:
    """IOB1 (or BIO) → BIO: an ``I-X`` that does not continue an ``X`` entity becomes ``B-X``."""
    out: list[str] = []
    prev = "O"
    for tag in tags:
        if tag.startswith("I-") and (prev == "O" or prev[2:] != tag[2:]):
            tag = "B-" + tag[2:]
        out.append(tag)
        prev = tag
    return out


def _open(path: Path):
    return open_text(path)  # decoding errors name the file, line and byte offset


def read_conll(path: str | Path, split: str = "data") -> list[Example]:
    """Read one CoNLL-2003 file into examples ``{"id", "tokens", "pos", "chunk", "tags"}`` (tags in BIO).

    Raises DataError naming the file and line on a row without 4 columns or with a malformed NER tag.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found (expected a CoNLL-2003 file with columns 'word POS chunk NER')")
    examples: list[Example] = []
    rows: list[list[str]] = []

    def flush() -> None:
        if rows:
            examples.append(
                {
                    "id": f"{split}-{len(examples)}",
                    "tokens": [r[0] for r in rows],
                    "pos": [r[1] for r in rows],  # not a plug-in name: the CoNLL-2003 column
                    "chunk": [r[2] for r in rows],
                    "tags": iob1_to_bio([r[3] for r in rows]),
                }
            )
            rows.clear()

    with _open(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            cols = line.split()
            if not cols:
                flush()
                continue
            if cols[0] == "-DOCSTART-":
                flush()
                continue
            if len(cols) != N_COLUMNS:
                raise DataError(
                    f"{path}:{lineno}: expected {N_COLUMNS} columns 'word POS chunk NER', got {len(cols)}: {line.strip()!r}"
                )
            if not check_tag(cols[3]):
                raise DataError(f"{path}:{lineno}: bad NER tag {cols[3]!r} (expected O, B-TYPE or I-TYPE)")
            rows.append(cols)
    flush()
    return examples


def hub_records_to_examples(ds: Any, name: str) -> list[Example]:
    """Examples from one split of the hub dataset ``conll2003`` (``tokens`` and ``pos_tags`` / ``chunk_tags`` /
    ``ner_tags`` as ClassLabel ids, names on the features): the same fields as ``read_conll``.

    The hub's tags are already IOB2; ``iob1_to_bio`` leaves them unchanged. Like ``read_conll``, the hub skips the
    ``-DOCSTART-`` lines, so the i-th example of a split is the i-th sentence of the official file.
    """
    names = {key: ds.features[key].feature.names for key in ("pos_tags", "chunk_tags", "ner_tags")
             if key in ds.features}
    if "ner_tags" not in names or "tokens" not in ds.features:
        raise DataError(f"hub split {name}: expected columns 'tokens' and 'ner_tags'; columns are {sorted(ds.features)}")
    examples: list[Example] = []
    for i, record in enumerate(ds):
        tags = [names["ner_tags"][t] for t in record["ner_tags"]]
        for tag in tags:
            if not check_tag(tag):
                raise DataError(f"hub split {name} record {i}: bad NER tag {tag!r} (expected O, B-TYPE or I-TYPE)")
        example: Example = {"id": f"{name}-{i}", "tokens": list(record["tokens"])}
        for key, field in (("pos_tags", "pos"), ("chunk_tags", "chunk")):  # not a plug-in name: the columns
            if key in names:
                example[field] = [names[key][t] for t in record[key]]
        example["tags"] = iob1_to_bio(tags)
        examples.append(example)
    return examples


def read_splits(data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
    """Every split named in ``data_cfg`` (train/dev/test; a missing or null one is absent)."""
    return shared_read_splits(data_cfg, read_conll, hub_records_to_examples)


def iter_entities(tags: Sequence[str]) -> Iterator[tuple[str, int, int]]:
    """Entity spans ``(type, start, end_exclusive)`` of a BIO sequence (used for counts, not for scoring)."""
    start, kind = -1, ""
    for i, tag in enumerate(list(tags) + ["O"]):
        if start >= 0 and (tag == "O" or tag.startswith("B-") or tag[2:] != kind):
            yield kind, start, i
            start = -1
        if tag != "O" and start < 0:
            start, kind = i, tag[2:]
