"""edge_srl targets from CoNLL-2005, read by the shared SRL reader (elmo_bench/data/srl_conll.py: one example per
sentence and gold predicate, BIO tags): each argument is one target, (predicate span, argument span) → its role (A0,
AM-TMP, R-A1, C-A0, ...), as jiant's OntoNotes extraction pairs them. Every role is a label; the metric keeps A0-A5,
AA and AM-* (elmo_bench.data.edge_metric.srl_scored)."""
from __future__ import annotations

from typing import Any, Mapping

from elmo_bench.data.edge import make_target
from elmo_bench.data.srl_conll import read_split
from elmo_bench.data.srl_spans import bio_to_spans, spans_to_bio
from elmo_bench.tasks.api import Example

PREDICATE = "V"


def argument_targets(example: Example) -> list[dict[str, Any]]:
    """(predicate, argument) targets of one proposition; the predicate span is its V span (else its word)."""
    spans = bio_to_spans(example["tags"])
    index = example["predicate_index"]
    predicate = next(((s, e + 1) for label, s, e in spans if label == PREDICATE and s <= index <= e),
                     (index, index + 1))
    return [make_target(predicate, [label], (s, e + 1)) for label, s, e in spans if label != PREDICATE]


def bio_of(example: Example) -> list[str]:
    """The proposition's BIO tags (V included) back from the targets: the round trip the tests check."""
    spans = [(t["labels"][0], t["span2"][0], t["span2"][1] - 1) for t in example["targets"]]
    start, end = example["predicate"]
    return spans_to_bio(sorted([*spans, (PREDICATE, start, end - 1)], key=lambda s: s[1]), len(example["tokens"]))


def read_native(data_cfg: Mapping[str, Any], split: str) -> list[Example]:
    out = []
    for ex in read_split(data_cfg, split):
        targets = argument_targets(ex)
        predicate = targets[0]["span1"] if targets else [ex["predicate_index"], ex["predicate_index"] + 1]
        out.append({"id": ex["id"], "tokens": ex["tokens"], "targets": targets, "predicate": predicate,
                    "sentence_id": ex["sentence_id"]})
    return out
