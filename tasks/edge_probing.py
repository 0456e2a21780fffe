"""The Task every edge-probing task is (Tenney et al. 2019; docs/edge-probing.md): the six tasks under tasks/edge_*/
differ only in their name, whether a target is a span pair, their metric and their reader, which each task's
``task.py`` sets on a subclass of :class:`EdgeProbingTask`. The shared logic without torch is
elmo_bench.data.edge_task's; the head and the gold tensors are elmo_bench.modules.edge_head's.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import torch
from torch import nn

from elmo_bench.data.edge import read_edge_splits
from elmo_bench.data.edge_task import EdgeTaskLogic
from elmo_bench.modules.edge_head import EdgeHead, edge_targets
from elmo_bench.tasks.api import Example, Task


class EdgeProbingTask(EdgeTaskLogic, Task):
    """Set ``name``, ``two_spans``, ``metric_kind`` and ``read_native`` (a staticmethod: a split's source file →
    its sentences with their edge targets, the task's reader.py)."""

    read_native: Callable[..., Any]

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        return read_edge_splits(data_cfg, type(self).read_native, self.two_spans)

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        return edge_targets(examples, self.labels, self.two_spans)

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        if not self.labels:
            raise RuntimeError(f"{type(self).__name__}.build_head: call fit_labels (or load_state_dict) first")
        return EdgeHead(len(self.labels), input_dims["tokens"], self.two_spans, **dict(head_cfg))

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[list[list[str]]]:
        """Per example, per gold target, the labels whose sigmoid is >= 0.5."""
        return self.decode_probabilities(output["probabilities"].float().tolist(), examples)
