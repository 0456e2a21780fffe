"""Issue 13 item 1, "ELMo enters each head once": every input column is dropped exactly once on its way into a head.

The check is deterministic: the whole model (TaskEmbedder + head) runs one training-mode forward pass; hooks record
the GloVe vectors and every ScalarMix output as they are made (before any dropout) and the input and output of every
dropout module, in call order; a dropout "applies" to a column when its input holds that column, or a dropped
version of it made by an earlier dropout, verbatim (its output column becomes a version too). ELMo columns must meet exactly
one dropout (the ELMo module's, with the config's ELMo dropout); GloVe columns exactly one in heads with an input
dropout (the head's own) and none in the heads that have none (SRL, the POS probe).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from elmo_bench.engine.collate import Collator
from elmo_bench.engine.loop import TaskModel
from elmo_bench.modules.dropout import LockedDropout
from elmo_bench.modules.scalar_mix import ScalarMix
from elmo_bench.modules.token_embedders import TaskEmbedder, WordVocabulary
from elmo_bench.records.elmo_settings import ElmoSettings
from elmo_bench.tasks.coref.task import CorefTask
from elmo_bench.tasks.ner.task import NerTask
from elmo_bench.tasks.pos.task import PosTask
from elmo_bench.tasks.snli.task import SnliTask
from elmo_bench.tasks.squad.task import SquadTask
from elmo_bench.tasks.srl.task import SrlTask
from elmo_bench.tasks.sst.task import SstTask

WORDS = [f"w{i}" for i in range(20)]
LAYERS, DIM, GLOVE = 3, 6, 5


def _tokens(n: int, shift: int) -> list[str]:
    return [WORDS[(shift + 3 * i) % len(WORDS)] for i in range(n)]


def _cases() -> dict[str, tuple[Any, dict, str, list[dict], int]]:
    """task → (task, head config, ELMo placement, examples, GloVe dropouts expected per column)."""
    bio = ["B-A", "I-A", "O", "O", "B-B"]
    return {
        "ner": (NerTask(), {"char_dim": 4, "char_filters": 5, "char_width": 3, "lstm_hidden": [6, 6],
                            "dropout": 0.5, "constrain_decoding": True}, "both",
                [{"tokens": _tokens(5, s), "tags": bio} for s in range(3)], 1),
        "sst": (SstTask(), {"pre_encode_dim": 6, "encoder_hidden": 5, "integrator_hidden": 5, "output_dims": [6],
                            "embedding_dropout": 0.5, "pre_encode_dropout": 0.25, "integrator_dropout": 0.1,
                            "output_dropout": 0.2},
                "both", [{"tokens": _tokens(4, s), "label": s % 5} for s in range(3)], 1),
        "snli": (SnliTask(), {"hidden_dim": 5, "projection_dim": None, "mlp_dim": None, "dropout": 0.5}, "both",
                 [{"premise": _tokens(5, s), "hypothesis": _tokens(3, s + 1), "label": "neutral"} for s in range(3)], 1),
        "squad": (SquadTask(), {"hidden_dim": 5, "linear_dim": 6, "dropout": 0.5, "char_dim": 4, "char_filters": 5,
                                "char_width": 3, "use_chars": True, "max_span_length": 17}, "both",
                  [{"question": _tokens(3, s), "context": _tokens(6, s + 2), "span": (1, 2)} for s in range(3)], 1),
        "srl": (SrlTask(), {"hidden": 5, "layers": 2, "predicate_dim": 3, "recurrent_dropout": 0.3}, "both",
                [{"tokens": _tokens(5, s), "predicate_index": 1, "tags": bio} for s in range(3)], 0),
        "coref": (CorefTask(), {"hidden": 5, "max_span_width": 2, "feature_dim": 3, "ffnn_dim": 6, "ffnn_layers": 1,
                                "char_cnn": True, "char_dim": 4, "char_filters": 3, "char_widths": [2], "lstm_dropout": 0.2,
                                "lexical_dropout": 0.5, "ffnn_dropout": 0.2, "spans_per_word": 0.4, "max_antecedents": 250,
                                "max_segment_len": 128, "use_speakers": False}, "input",
                  [{"tokens": _tokens(6, s), "sentence_ids": [0, 0, 0, 1, 1, 1], "clusters": [[(0, 0), (3, 3)]]}
                   for s in range(2)], 1),
        "pos": (PosTask(), {"bias": True}, "both", [{"tokens": _tokens(4, s), "tags": ["DT", "NN", "VB", "NN"]} for s in range(3)], 0),
    }


class RandomLayers:
    """A layer source like the activation cache's: get(i) → (L+1, n_i, dim) float32, fixed random values."""

    def __init__(self, lengths: list[int], seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.arrays = [rng.normal(size=(LAYERS, n, DIM)).astype(np.float32) for n in lengths]

    def get(self, index: int) -> np.ndarray:
        return self.arrays[index]


def dropout_counts(source: torch.Tensor, calls: list[tuple[torch.Tensor, torch.Tensor]]) -> list[int]:
    """How many dropout calls met each column of ``source`` (batch, time, K), following dropped versions.

    ``calls`` holds (input, output) of every dropout call in order, each (batch, time, D) or another shape.
    """
    versions = [[source[..., k].detach()] for k in range(source.shape[-1])]
    counts = [0] * source.shape[-1]
    for x, y in calls:
        if x.dim() != 3 or x.shape[:2] != source.shape[:2]:
            continue
        for k, known in enumerate(versions):
            hits = [j for j in range(x.shape[-1]) if any(torch.equal(x[..., j].detach(), v) for v in known)]
            if hits:
                counts[k] += 1
                known.extend(y[..., j].detach() for j in hits if y[..., j].abs().sum() > 0)
    return counts


@pytest.mark.parametrize("name", list(_cases()))
def test_every_input_column_is_dropped_exactly_once(name):
    torch.manual_seed(0)
    task, head_cfg, placement, examples, glove_drops = _cases()[name]
    for e in examples:
        e["_index"] = examples.index(e)
    task.fit_labels({"train": examples})
    vocab = WordVocabulary(WORDS)
    table = torch.randn(len(vocab), GLOVE)
    embedder = TaskEmbedder(table, True, ElmoSettings(placement=placement, dropout=0.5), LAYERS, DIM)
    head = task.build_head(head_cfg, {f: embedder.input_dim for f in task.text_fields}, embedder.output_dim)
    model = TaskModel(embedder, head).train()
    with torch.no_grad():  # distinct mixes: the input and output mixes must not produce identical columns
        for mix in embedder.elmo.mixes:
            mix.scalars.normal_()
    sources = {f: RandomLayers([len(e[f]) for e in examples], seed=k) for k, f in enumerate(task.text_fields)}
    batch = Collator(task, vocab, sources)(examples)

    made: dict[str, list[torch.Tensor]] = {"glove": [], "elmo": []}
    calls: list[tuple[torch.Tensor, torch.Tensor]] = []
    hooks = [embedder.glove.register_forward_hook(lambda m, i, out: made["glove"].append(out))]
    hooks += [m.register_forward_hook(lambda m, i, out: made["elmo"].append(out))
              for m in model.modules() if isinstance(m, ScalarMix)]
    hooks += [m.register_forward_hook(lambda m, inputs, out: calls.append((inputs[0], out)))
              for m in model.modules() if isinstance(m, (nn.Dropout, LockedDropout))]
    model(batch)
    for hook in hooks:
        hook.remove()

    expected_mixes = len(task.text_fields) * (2 if placement == "both" and name != "coref" else 1)
    assert len(made["elmo"]) == expected_mixes and len(made["glove"]) == len(task.text_fields)
    for kind, want in (("elmo", 1), ("glove", glove_drops)):
        for source in made[kind]:
            counts = dropout_counts(source, calls)
            assert counts == [want] * source.shape[-1], f"{name}: {kind} columns dropped {counts} times"
