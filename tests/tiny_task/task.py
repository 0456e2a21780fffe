"""TinyTask: the whole surface of a task (elmo_bench.tasks.api) in one small file, for the engine tests."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import DataError
from elmo_bench.data.batch import Batch
from elmo_bench.data.textio import open_text
from elmo_bench.tasks.api import Example, Task


def read_tsv(path: str | Path) -> list[Example]:
    """``label<TAB>whitespace tokens`` a line → examples; DataError naming the line otherwise."""
    examples = []
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            label, tab, text = line.rstrip("\n").partition("\t")
            if not tab or label not in ("0", "1") or not text.split():
                raise DataError(f"{path}: line {number}: expected '0|1<TAB>tokens', found {line.rstrip()!r}")
            examples.append({"id": f"{Path(path).name}:{number}", "tokens": text.split(), "label": int(label)})
    return examples


class MeanPoolHead(nn.Module):
    """[dropout(GloVe) ; ELMo_in] (batch, time, d) → masked mean over time (batch, d) → linear → logits (batch, 2)."""

    def __init__(self, input_dim: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(input_dim, 2)

    def forward(self, batch: Batch) -> dict[str, torch.Tensor]:
        x, m = batch.inputs("tokens", self.dropout), batch.mask("tokens")
        pooled = (x * m.unsqueeze(-1)).sum(1) / m.sum(1, keepdim=True).clamp(min=1)
        logits = self.out(pooled)
        out = {"logits": logits}
        if "label" in batch.targets:
            out["loss"] = F.cross_entropy(logits, batch.targets["label"])
        return out


class TinyTask(Task):
    name = "tiny"
    text_fields = ("tokens",)
    main_metric = "accuracy"

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        return {split: read_tsv(data_cfg[split]) for split in ("train", "dev", "test") if data_cfg.get(split)}

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        return {"label": torch.tensor([ex["label"] for ex in examples], dtype=torch.long)}

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        return MeanPoolHead(input_dims["tokens"], **dict(head_cfg))

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[int]:
        return output["logits"].argmax(-1).tolist()

    def metric(self, predictions: Sequence[int], examples: Sequence[Example]) -> dict[str, float]:
        if not examples:
            raise DataError("tiny: no examples to score")
        return {"accuracy": 100.0 * sum(p == ex["label"] for p, ex in zip(predictions, examples)) / len(examples)}

    statistics_kind = "ratio"

    def statistics(self, predictions: Sequence[int], examples: Sequence[Example]) -> list[list[float]]:
        return [[float(p == ex["label"]), 1.0] for p, ex in zip(predictions, examples, strict=True)]

    score_file_count = 2

    def score_files(self, *paths: str) -> dict[str, float]:
        """A gold tsv and one predicted label (0|1) a line → {"accuracy"}."""
        gold = read_tsv(paths[0])
        with open_text(paths[1]) as handle:
            predicted = [int(line) for line in handle if line.strip()]
        if len(predicted) != len(gold):
            raise DataError(f"{paths[1]}: {len(predicted)} labels for {len(gold)} examples in {paths[0]}")
        return self.metric(predicted, gold)

    def write_official(self, path: str | Path, predictions: Sequence[int], examples: Sequence[Example]) -> None:
        atomic_write_text(path, "".join(f"{p}\n" for p in predictions))
