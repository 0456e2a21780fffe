"""NerTask: the engine-facing surface for CoNLL-2003 NER (BIO tags, CRF head, conlleval F1)."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import torch
from torch import nn

from elmo_bench.modules.labels import bio_labels
from elmo_bench.tasks.api import Example, Task
from elmo_bench.tasks.ner import metric, reader
from elmo_bench.tasks.ner.model import NerHead


class NerTask(Task):
    name = "ner"
    text_fields = ("tokens",)
    main_metric = "f1"

    def __init__(self) -> None:
        self.labels: list[str] = []
        self.head: Optional[NerHead] = None

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        return reader.read_splits(data_cfg)

    def fit_labels(self, splits: Mapping[str, Sequence[Example]]) -> None:
        """``O`` then ``B-X``, ``I-X`` for every entity type X in the gold of any split (sorted: stable across runs);
        a type missing from training is logged as a warning instead of crashing the first dev evaluation."""
        self.labels = bio_labels(splits, self.name)

    @property
    def _index(self) -> dict[str, int]:
        return {tag: i for i, tag in enumerate(self.labels)}

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """{"tags": (batch, time) label ids, 0 (= "O") at padding}; empty when the examples carry no gold."""
        if not examples or "tags" not in examples[0]:
            return {}
        index = self._index
        time = max(len(ex["tokens"]) for ex in examples)
        tags = torch.zeros(len(examples), time, dtype=torch.long)
        for b, ex in enumerate(examples):
            try:
                tags[b, : len(ex["tags"])] = torch.tensor([index[t] for t in ex["tags"]], dtype=torch.long)
            except KeyError as err:
                raise ValueError(f"example {ex.get('id')}: tag {err.args[0]!r} not among the training labels {self.labels}")
        return {"tags": tags}

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        if not self.labels:
            raise RuntimeError("NerTask.build_head: call fit_labels (or load_state_dict) first")
        cfg = dict(head_cfg)
        if "lstm_hidden" in cfg:
            cfg["lstm_hidden"] = [int(h) for h in cfg["lstm_hidden"]]
        self.head = NerHead(self.labels, input_dims["tokens"], elmo_output_dim, **cfg)
        return self.head

    def decode(self, output: Mapping[str, Any], examples: Sequence[Example]) -> list[list[str]]:
        """Viterbi tag strings (BIO), one list per sentence."""
        predicted = output.get("predicted")
        if predicted is None:  # the head ran in training mode: decode its emissions now
            if self.head is None:
                raise RuntimeError("NerTask.decode: output has no 'predicted' and no head was built")
            paths = self.head.crf.viterbi(output["emissions"], output["mask"], self.head.constrain_decoding)
        else:
            paths = [[i for i in row if i >= 0] for row in predicted.tolist()]
        return [[self.labels[i] for i in path[: len(ex["tokens"])]] for path, ex in zip(paths, examples)]

    def metric(self, predictions: Sequence[Sequence[str]], examples: Sequence[Example]) -> dict[str, float]:
        """conlleval precision / recall / F1 (percent) over entity chunks."""
        return metric.score_sentences([ex["tags"] for ex in examples], predictions)

    def state_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.labels = list(state["labels"])
