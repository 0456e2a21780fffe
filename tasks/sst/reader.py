"""Stanford Sentiment Treebank (SST-5) reader: PTB-style trees, one per line, every node labelled 0..4.

    (3 (2 It) (4 (3 (2 is) (4 great)) (2 .)))

Evaluation uses the root of each tree. Training may add phrases (the subtrees): ``train_phrases`` is ``all``
(every node), ``min4`` (phrases of at least 4 tokens, as CoVe and the ELMo paper train) or ``none`` (roots only).
Within one tree a span is emitted once. Phrase examples carry ``is_root: False``.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from elmo_bench.base.errors import DataError
from elmo_bench.data.data_options import data_options
from elmo_bench.data.splits import read_splits as shared_read_splits
from elmo_bench.data.textio import open_text
from elmo_bench.tasks.api import Example
from elmo_bench.tasks.sst.config import DataOptions

N_CLASSES = 5
_TOKEN = re.compile(r"\(|\)|[^\s()]+")
PHRASE_OPTIONS = ("all", "min4", "none")


def parse_tree(line: str, where: str = "tree") -> tuple[list[str], list[tuple[int, int, int]]]:
    """Leaves and labelled spans ``(label, start, end_exclusive)`` of one tree; the root span comes last.

    Raises DataError (prefixed with ``where``, e.g. ``file:line``) on unbalanced brackets, a label outside 0..4,
    a node without children, a node mixing words and subtrees, or text outside the root.
    """
    tokens = _TOKEN.findall(line)
    leaves: list[str] = []
    spans: list[tuple[int, int, int]] = []
    stack: list[list[Any]] = []  # [label, start, n_words, n_subtrees]
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "(":
            if not stack and spans:
                raise DataError(f"{where}: text after the root's closing bracket (expected one tree per line)")
            if i + 1 >= len(tokens) or tokens[i + 1] not in {str(k) for k in range(N_CLASSES)}:
                got = tokens[i + 1] if i + 1 < len(tokens) else "end of line"
                raise DataError(f"{where}: bad label {got!r} after '(' (expected 0..4)")
            if stack:
                stack[-1][3] += 1
            stack.append([int(tokens[i + 1]), len(leaves), 0, 0])
            i += 2
            continue
        if tok == ")":
            if not stack:
                raise DataError(f"{where}: unbalanced brackets: ')' without a matching '('")
            label, start, n_words, n_sub = stack.pop()
            if n_words + n_sub == 0:
                raise DataError(f"{where}: empty node '({label})' (expected a word or subtrees)")
            if n_words and n_sub:  # several words in one leaf do occur: "(2 8 1\/2)" is two tokens
                raise DataError(f"{where}: node '({label} ...)' mixes words and subtrees (expected a binarized tree)")
            spans.append((label, start, len(leaves)))
        else:
            if not stack:
                raise DataError(f"{where}: word {tok!r} outside any bracket (expected '(label ...)')")
            stack[-1][2] += 1
            leaves.append(tok)
        i += 1
    if stack:
        raise DataError(f"{where}: unbalanced brackets: {len(stack)} '(' not closed")
    if not spans:
        raise DataError(f"{where}: no tree on this line")
    return leaves, spans


def trees_to_examples(lines: Iterable[tuple[str, str]], split: str, train_phrases: str = "none") -> list[Example]:
    """Examples ``{"id", "tokens", "label", "is_root"}`` from (where, tree line) pairs: each root, plus phrases as
    asked. Both the tree files and the hub's ``ptb_tree`` column come through here, so they give the same examples."""
    if train_phrases not in PHRASE_OPTIONS:
        raise ValueError(f"train_phrases must be one of {PHRASE_OPTIONS}, got {train_phrases!r}")
    min_len = {"all": 1, "min4": 4}.get(train_phrases)
    examples: list[Example] = []
    n_trees = 0
    for where, line in lines:
        if not line.strip():
            continue
        leaves, spans = parse_tree(line, where)
        root_label, _, _ = spans[-1]
        tree_id = f"{split}-{n_trees}"
        examples.append({"id": tree_id, "tokens": leaves, "label": root_label, "is_root": True})
        n_trees += 1
        if min_len is None:
            continue
        seen = {(0, len(leaves))}
        for label, start, end in reversed(spans[:-1]):  # outer spans first: a unary chain keeps its top label
            if end - start >= min_len and (start, end) not in seen:
                seen.add((start, end))
                examples.append({"id": f"{tree_id}:{start}-{end}", "tokens": leaves[start:end], "label": label,
                                 "is_root": False})
    return examples


def read_trees(path: str | Path, split: str = "data", train_phrases: str = "none") -> list[Example]:
    """Examples from a PTB-tree file (one tree per line): each root, plus phrases as asked."""
    if train_phrases not in PHRASE_OPTIONS:
        raise ValueError(f"train_phrases must be one of {PHRASE_OPTIONS}, got {train_phrases!r}")
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found (expected SST PTB trees, one per line)")
    with open_text(path) as handle:
        return trees_to_examples(((f"{path}:{n}", line) for n, line in enumerate(handle, start=1)), split,
                                 train_phrases)


def _fine_label(value: Any) -> int:
    """Hub labels: ints 0..4 as they are; the ``sst`` dataset's floats in [0, 1] binned as SST-5 does."""
    if isinstance(value, float):  # SST bins: [0, .2], (.2, .4], (.4, .6], (.6, .8], (.8, 1]
        return max(0, math.ceil(value * N_CLASSES - 1e-9) - 1)
    return int(value)


def hub_records_to_examples(ds: Any, split: str, train_phrases: str = "none") -> list[Example]:
    """Examples from one hub split.

    * ``stanfordnlp/sst`` config ``ptb`` (column ``ptb_tree``: the official tree files' lines) — the supported
      source: the same trees, so the same roots and phrases as ``read_trees``;
    * ``SetFit/sst5`` (``text``, integer ``label``) or ``stanfordnlp/sst`` default (``sentence``/``tokens``, float
      ``label``): root sentences only, tokenised as that copy publishes them (not checked against the trees).
    """
    if "ptb_tree" in ds.features:
        return trees_to_examples(((f"hub split {split} record {i}", r["ptb_tree"]) for i, r in enumerate(ds)),
                                 split, train_phrases)
    out: list[Example] = []
    for i, record in enumerate(ds):
        if isinstance(record.get("tokens"), str):
            tokens = record["tokens"].split("|")
        else:
            tokens = (record.get("text") or record.get("sentence") or "").split()
        label = _fine_label(record["label"])
        if not tokens or not 0 <= label < N_CLASSES:
            raise DataError(f"hub split {split} record {i}: expected non-empty text and a label in 0..4")
        out.append({"id": f"{split}-{i}", "tokens": tokens, "label": label, "is_root": True})
    return out


def read_splits(data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
    """Every split named in ``data_cfg``; phrases (``train_phrases``) are added to the train split only."""
    phrases = data_options(DataOptions, data_cfg).train_phrases
    return shared_read_splits(
        data_cfg, lambda path, name: read_trees(path, name, phrases if name == "train" else "none"),
        lambda ds, name: hub_records_to_examples(ds, name, phrases if name == "train" else "none"))
