"""The SRL task as the engine sees it: one example per gold predicate, BIO tags, constrained Viterbi, srl-eval F1.

``targets`` carries the predicate indicator (an input of the head, not a gold label), so the engine must call it
at prediction time too; the gold ``tags`` tensor is included only when every example has gold tags.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from torch import nn

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.data.splits import split_location
from elmo_bench.data.srl_conll import read_split
from elmo_bench.data.srl_spans import bio_to_spans, spans_to_brackets
from elmo_bench.modules.labels import bio_labels
from elmo_bench.tasks.api import Example, Task
from elmo_bench.tasks.srl import metric as srl_metric
from elmo_bench.tasks.srl.decode import decode_batch
from elmo_bench.tasks.srl.metric import score_bio
from elmo_bench.tasks.srl.model import SrlHead

log = logging.getLogger(__name__)
SPLITS: tuple[str, ...] = ("train", "dev", "test", "test_brown")


class SrlTask(Task):
    name = "srl"
    text_fields = ("tokens",)
    main_metric = "f1"

    def __init__(self) -> None:
        self.labels: list[str] = ["O"]

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        """Splits named in data_cfg (train/dev/test, plus test_brown for CoNLL-2005) → examples."""
        splits = {}
        for split in SPLITS:
            if split_location(data_cfg, split) is not None:
                splits[split] = read_split(data_cfg, split)
                log.info("srl %s: %d propositions from %s", split, len(splits[split]), split_location(data_cfg, split))
        return splits

    def fit_labels(self, splits: Mapping[str, Sequence[Example]]) -> None:
        """Label set = O plus B-X and I-X for every argument type X in the gold of any split (a type missing from
        training is logged as a warning)."""
        self.labels = bio_labels(splits, self.name)

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """predicate_indicator (batch, time) long 0/1; tags (batch, time) label ids (unseen labels → O)."""
        t_len = max(len(ex["tokens"]) for ex in examples)
        indicator = torch.zeros(len(examples), t_len, dtype=torch.long)
        for b, ex in enumerate(examples):
            indicator[b, ex["predicate_index"]] = 1
        out = {"predicate_indicator": indicator}
        if all("tags" in ex for ex in examples):
            index = {lab: i for i, lab in enumerate(self.labels)}
            tags = torch.zeros(len(examples), t_len, dtype=torch.long)
            for b, ex in enumerate(examples):
                tags[b, :len(ex["tags"])] = torch.tensor([index.get(t, 0) for t in ex["tags"]], dtype=torch.long)
            out["tags"] = tags
        return out

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        return SrlHead(input_dim=input_dims["tokens"], n_labels=len(self.labels), elmo_output_dim=elmo_output_dim,
                       **dict(head_cfg))

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[list[str]]:
        """Valid BIO tags per example (constrained Viterbi over the tag log-probabilities)."""
        return decode_batch(output["logits"], [len(ex["tokens"]) for ex in examples], self.labels)

    def metric(self, predictions: Sequence[Sequence[str]], examples: Sequence[Example]) -> dict[str, float]:
        res = score_bio([ex["tags"] for ex in examples], predictions)
        return {k: res[k] for k in ("precision", "recall", "f1")}

    statistics_kind = "srl_f1"

    def statistics(self, predictions: Sequence[Sequence[str]], examples: Sequence[Example]) -> list[list[float]]:
        """[correct, excess, missed] arguments per proposition, as srl-eval counts them."""
        out = []
        for p, ex in zip(predictions, examples, strict=True):
            res = score_bio([ex["tags"]], [p])
            out.append([float(res["correct"]), float(res["excess"]), float(res["missed"])])
        return out

    score_file_count = 2

    def score_files(self, *paths: str) -> dict[str, float]:
        """srl-eval.pl on gold and predicted props files → {"precision", "recall", "f1"}."""
        return srl_metric.score_files(*paths)

    def write_official(self, path: str | Path, predictions: Sequence[Sequence[str]],
                       examples: Sequence[Example]) -> None:
        """The CoNLL-2005 props file of the predicted tags (``props_text``; the gold file: the gold tags')."""
        write_props(path, examples, predictions)

    def state_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if "labels" in state:
            self.labels = list(state["labels"])


def props_text(examples: Sequence[Example], tag_lists: Sequence[Sequence[str]]) -> str:
    """CoNLL-2005 props text for the sentences of ``examples``: column 1 the predicate lemma or '-', then one
    bracket column per predicate in word order. Writing gold tags and predicted tags with the same examples gives
    two files that srl-eval.pl (or ``metric.score_files``) scores with the official semantics; sentences without
    any predicate are left out of both, which does not change any count of the Overall line."""
    by_sentence: dict[Any, list[tuple[Example, Sequence[str]]]] = {}
    for ex, tags in zip(examples, tag_lists, strict=True):
        by_sentence.setdefault((ex["sentence_index"], ex["sentence_id"]), []).append((ex, tags))
    lines: list[str] = []
    for key in sorted(by_sentence, key=lambda k: k[0]):
        props = sorted(by_sentence[key], key=lambda p: p[0]["predicate_index"])
        n = len(props[0][0]["tokens"])
        first = ["-"] * n
        cols = []
        for ex, tags in props:
            first[ex["predicate_index"]] = ex["predicate_lemma"]
            cols.append(spans_to_brackets(bio_to_spans(tags), n))
        for i in range(n):
            lines.append(" ".join([f"{first[i]:<15}"] + [f"{c[i]:>12}" for c in cols]))
        lines.append("")
    return "\n".join(lines) + ("\n" if lines else "")


def write_props(path: str | Path, examples: Sequence[Example], tag_lists: Sequence[Sequence[str]]) -> None:
    """Write ``props_text`` atomically (temp file + rename)."""
    atomic_write_text(path, props_text(examples, tag_lists))  # temporaries of killed writes are cleaned
