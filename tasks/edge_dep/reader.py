"""edge_dep targets from UD English-EWT CoNLL-U: one target per word, (dependent, head) → the full relation with its
subtypes (``nmod:poss``, ``obl:tmod``); the root is a self-pair (the word and itself) labelled ``root``, as jiant's
``ud_to_json.py`` writes it. The words are the shared CoNLL-U reader's (elmo_bench/data/conllu.py): syntactic words,
multiword-token ranges (``3-4``) and empty nodes (``8.1``) skipped; the POS reader keeps no heads, so columns 7-8 are
read here. IDs and heads are ASCII digits, IDs counting up from 1, as the structural probes read them
(elmo_bench.data.conllu); a head that names no word of the sentence or an empty relation is refused with the file and
line."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.errors import DataError
from elmo_bench.data.conllu import head_id, is_word_row, word_id
from elmo_bench.data.edge import make_target
from elmo_bench.data.textio import open_text
from elmo_bench.tasks.api import Example

#: one word's row: (word id, form, head id, relation, line number)
Row = tuple[int, str, int, str, int]


def _row(cols: list[str], path: Path, lineno: int, expected: int) -> Row:
    """One word's row, its ID and HEAD read as the structural probes read them (elmo_bench.data.conllu)."""
    where = f"{path}:{lineno}"
    word = word_id(cols[0], where, expected=expected)
    head = head_id(cols[6], where)
    if cols[7] in ("", "_"):
        raise DataError(f"{where}: word {cols[0]} has no relation in column 8 (an empty label set); expected a "
                        f"UD relation such as nsubj or root")
    return word, cols[1], head, cols[7], lineno


def sentence_example(rows: list[Row], path: Path, sent_id: str) -> Example:
    """One sentence's rows → its example: target (dependent, head) per word, the root paired with itself."""
    count = len(rows)
    targets = []
    for position, (word, _, head, relation, lineno) in enumerate(rows, start=1):
        if word != position:
            raise DataError(f"{path}:{lineno}: word id {word} out of order; expected {position}")
        if not 0 <= head <= count:
            raise DataError(f"{path}:{lineno}: word {word} names head {head}, a word the sentence does not have "
                            f"(it has {count} words)")
        head = head or word
        targets.append(make_target((word - 1, word), [relation], (head - 1, head)))
    return {"id": sent_id, "tokens": [row[1] for row in rows], "targets": targets}


def read_dependencies(path: str | Path, split: str) -> list[Example]:
    """A CoNLL-U file → one example per sentence (``# sent_id`` names it)."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found (expected a CoNLL-U file with 10 tab-separated columns)")
    examples: list[Example] = []
    rows: list[Row] = []
    sent_id = ""
    with open_text(path) as handle:
        for lineno, line in enumerate([*handle, ""], start=1):
            line = line.rstrip("\n")
            if not line.strip():
                if rows:
                    examples.append(sentence_example(rows, path, sent_id or f"{split}-{len(examples)}"))
                rows, sent_id = [], ""
            elif line.startswith("#"):
                if line.startswith("# sent_id") and "=" in line:
                    sent_id = line.split("=", 1)[1].strip()
            else:
                cols = line.split("\t")
                if len(cols) != 10:
                    raise DataError(f"{path}:{lineno}: expected 10 tab-separated CoNLL-U columns, found {len(cols)}")
                if is_word_row(cols[0]):  # a multiword range or an empty node: no word
                    rows.append(_row(cols, path, lineno, len(rows) + 1))
    return examples


def read_native(data_cfg: Mapping[str, Any], split: str) -> list[Example]:
    return read_dependencies(data_cfg[split], split)
