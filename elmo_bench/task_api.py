"""The small surface every task package offers, so the engine never names a task.

A task lives in ``tasks/<name>/`` (reader.py, model.py, metric.py, task.py) and is registered in
``tasks/__init__.py`` by a dotted path to its ``Task`` subclass. The engine (run.py / elmo_bench.train) only
calls the methods below.

Data flow for one batch (shapes in brackets):

    examples (list of dicts) ──engine──▶ per text field f:
        words[f]  LongTensor (batch, time)        GloVe ids (engine-owned vocabulary)
        chars[f]  LongTensor (batch, time, 50)    bilm-tf character ids (elmo_bench.bilm.chars.batch_to_ids)
        mask[f]   BoolTensor (batch, time)
        layers[f] FloatTensor (batch, L+1, time, 2*proj)   cached frozen-biLM activations
    embedder ──▶ embedded[f] (batch, time, input_dim[f])   GloVe ⊕ ScalarMix_in(layers)  (as configured)
                 elmo_out[f] (batch, time, elmo_dim) | None ScalarMix_out(layers) when ELMo is placed at the output
    task.targets(examples) ──▶ targets: dict of gold tensors
    head(embedded, mask, elmo_out, chars, targets) ──▶ dict with "loss" (scalar) when targets are given
    task.decode(output, examples) ──▶ one prediction per example
    task.metric(predictions, examples) ──▶ {metric name: value in percent}; task.main_metric picks the dev metric
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import torch
from torch import nn

Example = dict[str, Any]


class Task:
    """Base class: override every method that raises."""

    #: registry name, e.g. "ner"
    name: str = ""
    #: names of the example fields that hold token lists and go through the biLM, e.g. ("premise", "hypothesis")
    text_fields: tuple[str, ...] = ("tokens",)
    #: the key of ``metric()`` used for early stopping and model selection (higher is better)
    main_metric: str = ""

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        """Read every split named in ``data_cfg`` (keys like train/dev/test → path or hub name).

        Each example is a dict holding ``text_fields`` as ``list[str]`` plus gold fields and an ``id``.
        """
        raise NotImplementedError

    def fit_labels(self, splits: Mapping[str, Sequence[Example]]) -> None:
        """Build label vocabularies (called once before build_head). ``splits["train"]`` is the training subset
        the run trains on; the other splits are there so that a gold label seen only in dev or test is known
        (with a logged warning, elmo_bench.modules.labels) instead of crashing after the first epoch."""

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """Gold tensors for one batch, padded to the batch's longest text field."""
        raise NotImplementedError

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        """The task head. ``input_dims[f]`` is the width of ``embedded[f]``; ``elmo_output_dim`` is 0 when
        ELMo is not placed at the output. forward(embedded, mask, elmo_out, chars, targets) -> dict."""
        raise NotImplementedError

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[Any]:
        """One prediction per example, in the official output format of the task where it has one."""
        raise NotImplementedError

    def metric(self, predictions: Sequence[Any], examples: Sequence[Example]) -> dict[str, float]:
        """Scores in percent, with the official scorer's semantics."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """Label vocabularies etc., saved in checkpoints so a resumed run decodes identically."""
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        pass
