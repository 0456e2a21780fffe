"""edge_ner targets from CoNLL-2003, read by the shared CoNLL-2003 reader (elmo_bench.data.conll2003: IOB1 →
BIO): each entity span is one target, its type (PER, LOC, ORG, MISC) the label."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from elmo_bench.data.conll2003 import iter_entities, read_conll
from elmo_bench.data.edge import make_target
from elmo_bench.tasks.api import Example


def entity_targets(tags: Sequence[str]) -> list[dict[str, Any]]:
    """One target [start, end) per entity of a BIO sequence, labelled with its type."""
    return [make_target((start, end), [kind]) for kind, start, end in iter_entities(tags)]


def bio_of(example: Example) -> list[str]:
    """The BIO tags back from the targets (the round trip the tests check)."""
    tags = ["O"] * len(example["tokens"])
    for target in example["targets"]:
        start, end = target["span1"]
        kind = target["labels"][0]
        tags[start:end] = [f"B-{kind}"] + [f"I-{kind}"] * (end - start - 1)
    return tags


def read_native(data_cfg: Mapping[str, Any], split: str) -> list[Example]:
    """A CoNLL-2003 file → one example per sentence (a sentence without entities has no target)."""
    return [{"id": ex["id"], "tokens": ex["tokens"], "targets": entity_targets(ex["tags"])}
            for ex in read_conll(data_cfg[split], split)]
