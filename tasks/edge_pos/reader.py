"""edge_pos targets from UD English-EWT, read by the shared CoNLL-U reader (elmo_bench.data.conllu: syntactic
words, multiword-token ranges and empty nodes skipped): each word is one target, its PTB tag (XPOS) the label."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from elmo_bench.data.conllu import read_conllu
from elmo_bench.data.edge import make_target
from elmo_bench.tasks.api import Example


def word_targets(tags: Sequence[str]) -> list[dict[str, Any]]:
    """One target [i, i + 1) per word, labelled with its tag."""
    return [make_target((i, i + 1), [tag]) for i, tag in enumerate(tags)]


def tags_of(example: Example) -> list[str]:
    """The tags back from the targets (the round trip the tests check)."""
    tags = [""] * len(example["tokens"])
    for target in example["targets"]:
        tags[target["span1"][0]] = target["labels"][0]
    return tags


def read_native(data_cfg: Mapping[str, Any], split: str) -> list[Example]:
    """A CoNLL-U split → one example per sentence with a target per word."""
    examples = read_conllu(data_cfg[split], data_cfg.get("tag_column") or "xpos", split)
    return [{"id": ex["id"], "tokens": ex["tokens"], "targets": word_targets(ex["tags"])} for ex in examples]
