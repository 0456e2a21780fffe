"""BCN head: shapes, padding invariance, ELMo at the output, a tiny training run; SstTask decode and metric."""
from __future__ import annotations

import pytest
import torch
from helpers_heads import train_losses

from elmo_bench.tasks.sst.task import SstTask
from tests.helpers_heads import call

HEAD = {"pre_encode_dim": 8, "encoder_hidden": 6, "integrator_hidden": 5, "output_dims": [12, 7],
        "embedding_dropout": 0.3, "pre_encode_dropout": 0.2, "integrator_dropout": 0.1, "output_dropout": 0.2}


def padded(seqs: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack (len_i, dim) tensors into (batch, time, dim) with garbage in the padding, plus the mask."""
    time = max(s.size(0) for s in seqs)
    x = 50.0 * torch.randn(len(seqs), time, seqs[0].size(1))
    mask = torch.zeros(len(seqs), time, dtype=torch.bool)
    for b, s in enumerate(seqs):
        x[b, : s.size(0)] = s
        mask[b, : s.size(0)] = True
    return x, mask


def test_shapes_and_padding_invariance() -> None:
    torch.manual_seed(0)
    head = SstTask().build_head(HEAD, {"tokens": 4}, elmo_output_dim=3).eval()
    seqs = [torch.randn(n, 4) for n in (2, 7, 4)]
    elmos = [torch.randn(n, 3) for n in (2, 7, 4)]
    x, mask = padded(seqs)
    e, _ = padded(elmos)
    logits = call(head, {"tokens": x}, {"tokens": mask}, {"tokens": e}, None, {})["logits"]
    assert logits.shape == (3, 5)
    for b, (s, el) in enumerate(zip(seqs, elmos)):
        alone = call(head, {"tokens": s[None]}, {"tokens": torch.ones(1, s.size(0), dtype=torch.bool)},
                     {"tokens": el[None]}, None, {})["logits"]
        assert torch.allclose(alone[0], logits[b], atol=1e-5), b
    # elmo_out really enters the integrator
    changed = call(head, {"tokens": x}, {"tokens": mask}, {"tokens": e + 1.0}, None, {})["logits"]
    assert not torch.allclose(changed, logits)
    with pytest.raises(ValueError, match="elmo_out"):
        call(head, {"tokens": x}, {"tokens": mask}, None, None, {})


def test_training_lowers_loss_and_metric() -> None:
    torch.manual_seed(1)
    task = SstTask()
    examples = [{"id": str(i), "tokens": ["w"] * n, "label": i % 5, "is_root": True} for i, n in enumerate([3, 5, 2, 6, 4, 3])]
    no_dropout = {**HEAD, **{k: 0.0 for k in HEAD if k.endswith("dropout")}}
    head = task.build_head(no_dropout, {"tokens": 4}, elmo_output_dim=0)
    x, mask = padded([torch.randn(len(ex["tokens"]), 4) for ex in examples])
    targets = task.targets(examples)
    assert targets["label"].tolist() == [0, 1, 2, 3, 4, 0]
    losses = train_losses(head, lambda: call(head, {"tokens": x}, {"tokens": mask}, None, None, targets)["loss"],
                          steps=40, lr=0.02)
    assert losses[-1] < 0.5 * losses[0]
    head.eval()
    preds = task.decode(call(head, {"tokens": x}, {"tokens": mask}, None, None, {}), examples)
    assert all(0 <= p < 5 for p in preds)
    assert task.metric(preds, examples)["accuracy"] == 100.0


def test_metric_counts_roots_only() -> None:
    examples = [{"label": 1, "is_root": True}, {"label": 2, "is_root": False}, {"label": 3, "is_root": True},
                {"label": 0, "is_root": True}]
    assert SstTask().metric([1, 2, 4, 0], examples) == {"accuracy": pytest.approx(200 / 3)}
