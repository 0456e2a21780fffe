"""The SNLI task as the engine sees it: read splits, build the ESIM head, decode labels, score accuracy."""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from torch import nn

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import DataError
from elmo_bench.data.hub import load_split
from elmo_bench.data.splits import source_of, split_location
from elmo_bench.tasks.api import Example, Task
from elmo_bench.tasks.snli import metric as snli_metric
from elmo_bench.tasks.snli.metric import accuracy
from elmo_bench.tasks.snli.model import Esim
from elmo_bench.tasks.snli.reader import LABELS, hub_records_to_examples, read_jsonl

log = logging.getLogger(__name__)
SPLITS: tuple[str, ...] = ("train", "dev", "test")


class SnliTask(Task):
    """Three-way entailment with ESIM; labels are fixed (entailment, neutral, contradiction).

    After ``read``, ``self.dropped`` holds per split how many pairs were dropped for gold label '-', and
    ``self.dev_source`` says where dev came from (its own file/split, or carved from train).
    """

    name = "snli"
    text_fields = ("premise", "hypothesis")
    main_metric = "accuracy"

    def __init__(self) -> None:
        self.labels: tuple[str, ...] = LABELS
        self.dropped: dict[str, int] = {}
        self.dev_source: str = ""

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        """Splits named in data_cfg (local: file paths; hub / disk: ``hub_splits``, see elmo_bench/data/splits.py).

        ``dev_from_train: N`` (int) makes dev the last N usable training pairs and removes them from train —
        the sandbox's way to early-stop when only SNLI dev/test exist locally; it requires ``dev`` to be empty.
        """
        source = source_of(data_cfg)
        splits: dict[str, list[Example]] = {}
        for split in SPLITS:
            where = split_location(data_cfg, split)
            if where is None:
                continue
            if source == "local":
                examples, dropped = read_jsonl(where)
            else:
                examples, dropped = hub_records_to_examples(load_split(data_cfg, where), split)
            splits[split], self.dropped[split] = examples, dropped
            log.info("snli %s: %d pairs, %d dropped (gold label '-') from %s", split, len(examples), dropped, where)
        self.dev_source = str(split_location(data_cfg, "dev") or "")
        carve = data_cfg.get("dev_from_train")
        if carve:
            carve = int(carve)
            if "dev" in splits:
                raise DataError("data config: both 'dev' and 'dev_from_train' are set; expected only one")
            train = splits.get("train", [])
            if carve >= len(train):
                raise DataError(f"data config: dev_from_train={carve} but train has only {len(train)} usable pairs")
            splits["train"], splits["dev"] = train[:-carve], train[-carve:]
            self.dev_source = f"last {carve} usable pairs of train ({data_cfg.get('train')})"
            log.info("snli dev: %s", self.dev_source)
        return splits

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        return {"label": torch.tensor([self.labels.index(ex["label"]) for ex in examples], dtype=torch.long)}

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        dims = {input_dims[f] for f in self.text_fields}
        if len(dims) != 1:
            raise ValueError(f"ESIM shares its encoder across premise and hypothesis; got input dims {dict(input_dims)}")
        return Esim(input_dim=dims.pop(), elmo_output_dim=elmo_output_dim, num_classes=len(self.labels), **head_cfg)

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[str]:
        return [self.labels[i] for i in output["logits"].argmax(dim=-1).tolist()]

    def metric(self, predictions: Sequence[str], examples: Sequence[Example]) -> dict[str, float]:
        return {"accuracy": accuracy(list(predictions), [ex["label"] for ex in examples])}

    statistics_kind = "ratio"

    def statistics(self, predictions: Sequence[str], examples: Sequence[Example]) -> list[list[float]]:
        """[right, 1] per premise-hypothesis pair."""
        return [[float(p == ex["label"]), 1.0] for p, ex in zip(predictions, examples, strict=True)]

    score_file_count = 2

    def score_files(self, *paths: str) -> dict[str, float]:
        """Gold jsonl and predictions → {"accuracy"}."""
        return snli_metric.score_files(*paths)

    def write_official(self, path: str | Path, predictions: Sequence[str], examples: Sequence[Example]) -> None:
        """{pairID: label}, the prediction file ``score_files`` reads beside the official jsonl."""
        atomic_write_text(path, json.dumps({ex["id"]: p for ex, p in zip(examples, predictions, strict=True)}))

    def state_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if "labels" in state:
            self.labels = tuple(state["labels"])
