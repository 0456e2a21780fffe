"""EdgeSrlTask: edge probing, (predicate, argument) → its CoNLL-2005 role; scored on A0-A5, AA and AM-*.

The reader (reader.py) turns the source annotation into edge targets (elmo_bench.data.edge); everything else is the
shared edge logic (elmo_bench.data.edge_task) and head (elmo_bench.modules.edge_head). docs/edge-probing.md.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import torch
from torch import nn

from elmo_bench.data.edge import read_edge_splits
from elmo_bench.data.edge_task import EdgeTaskLogic
from elmo_bench.modules.edge_head import EdgeHead, edge_targets
from elmo_bench.tasks.api import Example, Task
from elmo_bench.tasks.edge_srl.reader import read_native


class EdgeSrlTask(EdgeTaskLogic, Task):
    name = "edge_srl"
    two_spans = True
    metric_kind = "srl"

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        return read_edge_splits(data_cfg, read_native, self.two_spans)

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        return edge_targets(examples, self.labels, self.two_spans)

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        if not self.labels:
            raise RuntimeError("EdgeSrlTask.build_head: call fit_labels (or load_state_dict) first")
        return EdgeHead(len(self.labels), input_dims["tokens"], self.two_spans, **dict(head_cfg))

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[list[list[str]]]:
        """Per example, per gold target, the labels whose sigmoid is >= 0.5."""
        return self.decode_probabilities(output["probabilities"].float().tolist(), examples)
