"""The edge-probing head (issue 38): self-attentive span pooling, the per-role projections, the MLP and its loss."""
from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from elmo_bench.data.batch import Batch
from elmo_bench.modules.edge_head import EdgeHead, edge_targets
from elmo_bench.modules.span_pooling import SpanPooling


def test_a_one_word_span_pools_to_its_projected_word():
    torch.manual_seed(0)
    pool = SpanPooling(5, 4)
    words = torch.randn(2, 6, 5)
    spans = torch.tensor([[[3, 4], [0, 1]], [[5, 6], [2, 3]]])
    pooled = pool(words, spans)
    projected = pool.project(words)
    assert pooled.shape == (2, 2, 4)
    for b, n, i in ((0, 0, 3), (0, 1, 0), (1, 0, 5), (1, 1, 2)):
        assert torch.allclose(pooled[b, n], projected[b, i], atol=1e-6)


def test_a_longer_span_is_the_attention_weighted_sum_of_its_words_only():
    torch.manual_seed(1)
    pool = SpanPooling(3, 2)
    words = torch.randn(1, 5, 3)
    pooled = pool(words, torch.tensor([[[1, 4]]]))[0, 0]
    projected = pool.project(words)[0]
    scores = pool.score(projected).squeeze(-1)
    weights = torch.softmax(scores[1:4], dim=0)
    assert torch.allclose(pooled, (weights[:, None] * projected[1:4]).sum(0), atol=1e-6)
    words[0, 0] += 100.0                                    # a word outside the span changes nothing
    words[0, 4] -= 100.0
    assert torch.allclose(pool(words, torch.tensor([[[1, 4]]]))[0, 0], pooled, atol=1e-6)


def test_each_role_has_its_own_projection_and_the_mlp_is_jiants():
    head = EdgeHead(3, 8, two_spans=True, proj_dim=4, hidden_dim=6, dropout=0.3)
    assert len(head.roles) == 2 and head.roles[0].project is not head.roles[1].project
    kinds = [type(m).__name__ for m in head.mlp]
    assert kinds == ["Linear", "Tanh", "LayerNorm", "Dropout", "Linear"]
    assert head.mlp[0].in_features == 8 and head.mlp[3].p == 0.3 and head.mlp[4].out_features == 3


def test_loss_is_binary_cross_entropy_over_the_real_targets_only():
    torch.manual_seed(2)
    examples = [{"tokens": ["a", "b", "c"], "targets": [{"span1": [0, 1], "span2": [1, 3], "labels": ["x", "z"]},
                                                         {"span1": [2, 3], "span2": [0, 1], "labels": ["y"]}]},
                {"tokens": ["d"], "targets": [{"span1": [0, 1], "span2": [0, 1], "labels": ["w"]}]}]
    targets = edge_targets(examples, ["x", "y", "z"], two_spans=True)
    assert targets["span1"].shape == (2, 2, 2) and targets["target_mask"].tolist() == [[True, True], [True, False]]
    assert targets["labels"][0].tolist() == [[1, 0, 1], [0, 1, 0]]
    assert targets["labels"][1, 0].tolist() == [0, 0, 0]           # a label the run never saw: no column
    head = EdgeHead(3, 5, two_spans=True, proj_dim=4, hidden_dim=4, dropout=0.3).eval()
    words = torch.randn(2, 3, 5)
    batch = Batch.of({"tokens": None}, {"tokens": torch.tensor([[1, 1, 1], [1, 0, 0]])},
                     elmo_in={"tokens": words}, targets=targets)
    out = head(batch)
    assert out["logits"].shape == (2, 2, 3)
    mask = targets["target_mask"]
    expected = F.binary_cross_entropy(torch.sigmoid(out["logits"][mask]), targets["labels"][mask])
    assert out["loss"].item() == pytest.approx(expected.item(), rel=1e-5)


def test_decode_thresholds_each_label_at_one_half():
    from elmo_bench.engine.experiment import load_task

    task = load_task("edge_coref")
    task.labels = ["0", "1"]
    examples = [{"targets": [{}, {}]}, {"targets": [{}]}]
    decoded = task.decode({"probabilities": torch.tensor([[[0.2, 0.5], [0.7, 0.1]], [[0.49, 0.9], [0.9, 0.9]]])},
                          examples)
    assert decoded == [[["1"], ["0"]], [["1"]]]
