"""The small surface every task package offers, so the engine never names a task.

A task lives in ``tasks/<name>/`` (reader.py, model.py, metric.py, task.py) and declares itself in its torch-free
``config.py`` (``TASK = TaskDeclaration(name, ".task:Class", ...)``, found by elmo_bench.tasks.registry; the task
schema gives the composed ``task.name`` that name, and ``Task.name`` states it again: tests/test_one_shape.py holds them equal). The engine (run.py / elmo_bench.engine.experiment / elmo_bench.engine.loop) only calls the methods below.

Data flow for one batch (an elmo_bench.data.batch.Batch; shapes in brackets), per text field f:

    collator ──▶ mask (batch, time) bool · chars (batch, time, 50) bilm-tf character ids
                 word_ids (batch, time) GloVe rows · layers (batch, L+1, time, 2*proj) cached frozen-biLM layers
    embedder ──▶ words (batch, time, glove_dim)      GloVe vectors (not dropped yet)
                 elmo_in / elmo_out (batch, time, elmo_dim) | None   ScalarMix_in / ScalarMix_out, each dropped
                 once by the ELMo module (elmo_bench.modules.elmo.Elmo) with the config's ELMo dropout
    task.targets(examples) ──▶ batch.targets: dict of gold tensors (and inputs such as SRL's predicate indicator)
    head(batch) ──▶ dict with "loss" (scalar) when targets are given; the head's input is
                 ``batch.inputs(f, its_input_dropout, extra)`` = [dropout(words ; extra) ; elmo_in] (every column
                 dropped exactly once) and ``batch.elmo_output(f, dim, who)`` gives elmo_out (checked once, there)
    task.decode(output, examples) ──▶ one prediction per example
    task.metric(predictions, examples) ──▶ {metric name: value in percent}; task.main_metric picks the dev metric

What a run records (elmo_bench.records.run_record), so that the report needs neither this code nor the gold data:
    task.record_predictions(predictions, examples) ──▶ the text-free predictions (predictions_<split>.json.gz)
    task.statistics(predictions, examples) ──▶ one row of sufficient statistics per test example
                 (scores_test.json.gz); their column sums, aggregated by ``statistics_kind``, give the main metric
And on files: ``elmo-bench score NAME FILE...`` calls task.score_files (``score_file_count`` files), which scores
what task.write_official writes.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from torch import nn

#: One example as a task's reader returns it: its text fields (token lists, ``Task.text_fields``), its gold fields
#: and an ``id``; defined here once, for every reader, the engine and the probes.
Example = dict[str, Any]
#: The one key the engine adds to an example: its row in its split as read (after the training-fraction subset),
#: written by ``elmo_bench.engine.experiment.index_examples`` and read by the collator to fetch the example's
#: biLM layers from the split's activation source (row i of the source = the example at ``INDEX_KEY`` i). Readers
#: never set it; a task may ignore it.
INDEX_KEY = "_index"


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

    def example_key(self, example: Example) -> tuple[tuple[str, ...], ...] | None:
        """What makes two examples the same text, for measuring leakage between splits
        (elmo_bench.data.split_checks): the tuple of the example's text fields' token lists (SQuAD: question and
        context, so a context shared by several questions is no leakage). None: the example is not counted (SST's
        sub-sentence phrases, whose sentence is counted by its root)."""
        return tuple(tuple(example[name]) for name in self.text_fields)

    def fit_labels(self, splits: Mapping[str, Sequence[Example]]) -> None:
        """Build label vocabularies (called once before build_head). ``splits["train"]`` is the training subset
        the run trains on; the other splits are there so that a gold label seen only in dev or test is known
        (with a logged warning, elmo_bench.modules.labels) instead of crashing after the first epoch."""

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """Gold tensors for one batch, padded to the batch's longest text field."""
        raise NotImplementedError

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        """The task head. ``input_dims[f]`` is the width of ``batch.inputs(f)`` before the head's own extra
        features (GloVe + ELMo_in); ``elmo_output_dim`` is 0 when ELMo is not placed at the output.
        forward(batch: elmo_bench.data.batch.Batch) -> dict."""
        raise NotImplementedError

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[Any]:
        """One prediction per example, in the official output format of the task where it has one."""
        raise NotImplementedError

    def metric(self, predictions: Sequence[Any], examples: Sequence[Example]) -> dict[str, float]:
        """Scores in percent, with the official scorer's semantics."""
        raise NotImplementedError

    #: how ``statistics`` rows aggregate into ``main_metric``: one of elmo_bench.records.example_statistics.KINDS
    statistics_kind: str = ""

    def statistics(self, predictions: Sequence[Any], examples: Sequence[Example]) -> list[list[float]]:
        """One row of numbers per example whose column sums, aggregated by ``statistics_kind``, give exactly
        ``metric(predictions, examples)[main_metric]`` (on any subset too: the paired bootstrap resamples rows).
        Optional: without it a run records no statistics and the report shows no p-value for it."""
        raise NotImplementedError

    def record_predictions(self, predictions: Sequence[Any], examples: Sequence[Example]) -> list[Any]:
        """The predictions as the run record keeps them: labels, tags or spans, never the datasets' text (so the
        records can be committed). Default: as ``decode`` gave them, when they hold no text."""
        return list(predictions)

    #: how many files ``score_files`` takes; 0: the task has no file scorer (``elmo-bench score`` does not list it)
    score_file_count: int = 0

    def score_files(self, *paths: str) -> dict[str, float]:
        """Score official-format files (gold and predictions) with the official scorer's semantics; the printed
        JSON of ``elmo-bench score NAME FILE...``."""
        raise NotImplementedError

    def write_official(self, path: str | Path, predictions: Sequence[Any], examples: Sequence[Example]) -> None:
        """The predictions as the official-format file that ``score_files`` takes last (after the split's
        official gold file, when it takes two), so ``score_files(gold, path)`` equals ``metric``."""
        raise NotImplementedError

    def own_text(self, example: Example) -> bool:
        """Whether the example's text is a text of its own, not a piece of another example's (default: yes). SST's
        sub-sentence phrases say no: language-model adaptation (Table 7) reads each sentence once, whole."""
        return True

    def state_dict(self) -> dict[str, Any]:
        """Label vocabularies etc., saved in checkpoints so a resumed run decodes identically."""
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        pass
