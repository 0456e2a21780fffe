"""PosTask: POS tagging as a linear probe of one biLM layer (``mix=layer mix.layer=k``) or of the learned mix."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import torch
from torch import nn

from elmo_bench.modules.labels import IGNORE
from elmo_bench.tasks.api import Example, Task
from elmo_bench.tasks.pos import metric, reader
from elmo_bench.tasks.pos.model import LinearTagger


class PosTask(Task):
    name = "pos"
    text_fields = ("tokens",)
    main_metric = "accuracy"

    def __init__(self) -> None:
        self.labels: list[str] = []
        self.head: Optional[LinearTagger] = None

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        return reader.read_splits(data_cfg)

    def fit_labels(self, splits: Mapping[str, Sequence[Example]]) -> None:
        """The tags seen in training, sorted (stable across runs); a dev/test tag outside them is always wrong."""
        self.labels = sorted({tag for ex in splits["train"] for tag in ex["tags"]})

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """{"tags": (batch, time) label ids, -100 at padding and for unseen tags}; empty without gold."""
        if not examples or "tags" not in examples[0]:
            return {}
        index = {t: i for i, t in enumerate(self.labels)}
        time = max(1, max(len(ex["tokens"]) for ex in examples))
        tags = torch.full((len(examples), time), IGNORE, dtype=torch.long)
        for b, ex in enumerate(examples):
            tags[b, : len(ex["tags"])] = torch.tensor([index.get(t, IGNORE) for t in ex["tags"]], dtype=torch.long)
        return {"tags": tags}

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        if not self.labels:
            raise RuntimeError("PosTask.build_head: call fit_labels (or load_state_dict) first")
        self.head = LinearTagger(len(self.labels), input_dims["tokens"], elmo_output_dim, **dict(head_cfg))
        return self.head

    def decode(self, output: Mapping[str, Any], examples: Sequence[Example]) -> list[list[str]]:
        """Tag strings, one list per sentence."""
        rows = output["predicted"].tolist()
        return [[self.labels[i] for i in row[: len(ex["tokens"])]] for row, ex in zip(rows, examples)]

    def metric(self, predictions: Sequence[Sequence[str]], examples: Sequence[Example]) -> dict[str, float]:
        """Token accuracy in percent."""
        return metric.token_accuracy([ex["tags"] for ex in examples], predictions)

    statistics_kind = "ratio"

    def statistics(self, predictions: Sequence[Sequence[str]], examples: Sequence[Example]) -> list[list[float]]:
        """[right tags, tags] per sentence (token accuracy)."""
        return [[float(sum(a == b for a, b in zip(p, ex["tags"]))), float(len(ex["tags"]))]
                for p, ex in zip(predictions, examples, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.labels = list(state["labels"])
