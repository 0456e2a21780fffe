"""SstTask: SST-5 with the BCN head; trained on roots (+ phrases), evaluated by root accuracy."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from torch import nn

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.tasks.api import Example, Task
from elmo_bench.tasks.sst import metric, reader
from elmo_bench.tasks.sst.model import BCN


class SstTask(Task):
    name = "sst"
    text_fields = ("tokens",)
    main_metric = "accuracy"

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        return reader.read_splits(data_cfg)

    def example_key(self, example: Example) -> tuple[tuple[str, ...], ...] | None:
        """Roots only: a phrase is part of its sentence, and a short phrase ("the film") in two splits is no leak."""
        return super().example_key(example) if self.own_text(example) else None

    def own_text(self, example: Example) -> bool:
        """A phrase (``is_root`` false) is a piece of its sentence's text."""
        return bool(example.get("is_root", True))

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """{"label": (batch,) classes 0..4}; empty when the examples carry no gold."""
        if not examples or "label" not in examples[0]:
            return {}
        return {"label": torch.tensor([int(ex["label"]) for ex in examples], dtype=torch.long)}

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        cfg = dict(head_cfg)
        if "output_dims" in cfg:
            cfg["output_dims"] = [int(d) for d in cfg["output_dims"]]
        return BCN(input_dims["tokens"], elmo_output_dim, n_classes=reader.N_CLASSES, **cfg)

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[int]:
        """The predicted class (0..4) of each example."""
        return output["logits"].argmax(dim=-1).tolist()

    def metric(self, predictions: Sequence[int], examples: Sequence[Example]) -> dict[str, float]:
        """Fine-grained accuracy (percent) over root examples (phrase examples, if any, are left out)."""
        pairs = [(ex["label"], p) for ex, p in zip(examples, predictions) if ex.get("is_root", True)]
        if len(predictions) != len(examples):
            raise ValueError(f"{len(predictions)} predictions for {len(examples)} examples")
        return {"accuracy": metric.accuracy([g for g, _ in pairs], [p for _, p in pairs])}

    statistics_kind = "ratio"

    def statistics(self, predictions: Sequence[int], examples: Sequence[Example]) -> list[list[float]]:
        """[right, 1] per root, [0, 0] per phrase example (the accuracy counts roots only)."""
        out = []
        for p, ex in zip(predictions, examples, strict=True):
            weight = 1.0 if ex.get("is_root", True) else 0.0
            out.append([weight * float(p == ex["label"]), weight])
        return out

    score_file_count = 2

    def score_files(self, *paths: str) -> dict[str, float]:
        """Gold PTB trees and one predicted label (0..4) per tree → {"accuracy"} on the roots."""
        return metric.score_files(*paths)

    def write_official(self, path: str | Path, predictions: Sequence[int], examples: Sequence[Example]) -> None:
        """One predicted label a line, for each root in order (phrase examples are not scored)."""
        atomic_write_text(path, "".join(f"{p}\n" for p, ex in zip(predictions, examples, strict=True)
                                        if ex.get("is_root", True)))
