"""ESIM head: output shapes, padding invariance (with and without ELMo at the output), a loss that falls."""
from __future__ import annotations

import pytest
import torch
from helpers_heads import lengths_mask, train_losses

from elmo_bench.tasks.snli.model import Esim, masked_mean_max
from elmo_bench.tasks.snli.task import SnliTask
from tests.helpers_heads import call

D, E = 6, 4


def _batch(lengths_a: list[int], lengths_b: list[int], dim: int, seed: int) -> tuple[dict, dict]:
    g = torch.Generator().manual_seed(seed)
    ta, tb = max(lengths_a), max(lengths_b)
    emb = {"premise": torch.randn(len(lengths_a), ta, dim, generator=g),
           "hypothesis": torch.randn(len(lengths_b), tb, dim, generator=g)}
    mask = {"premise": lengths_mask(lengths_a), "hypothesis": lengths_mask(lengths_b)}
    return emb, mask


def test_masked_mean_max_hand_values() -> None:
    x = torch.tensor([[[1.0, -5.0], [3.0, -1.0], [100.0, 100.0]]])
    out = masked_mean_max(x, torch.tensor([[True, True, False]]))
    assert torch.allclose(out, torch.tensor([[2.0, -3.0, 3.0, -1.0]]))


def test_shapes_and_padding_invariance_with_elmo() -> None:
    torch.manual_seed(0)
    head = SnliTask().build_head({"hidden_dim": 5, "projection_dim": None, "mlp_dim": None, "dropout": 0.1}, {"premise": D, "hypothesis": D}, E).eval()
    emb, mask = _batch([3, 7], [5, 2], D, seed=1)
    elmo, _ = _batch([3, 7], [5, 2], E, seed=2)
    out = call(head, emb, mask, elmo, {}, {})
    assert out["logits"].shape == (2, 3) and "loss" not in out
    # the first pair alone, unpadded
    alone_emb = {"premise": emb["premise"][:1, :3], "hypothesis": emb["hypothesis"][:1, :5]}
    alone_elmo = {"premise": elmo["premise"][:1, :3], "hypothesis": elmo["hypothesis"][:1, :5]}
    alone_mask = {"premise": mask["premise"][:1, :3], "hypothesis": mask["hypothesis"][:1, :5]}
    alone = call(head, alone_emb, alone_mask, alone_elmo, {}, {})["logits"]
    assert torch.allclose(alone, out["logits"][:1], atol=1e-5)
    # garbage in the padded positions changes nothing
    emb2 = {k: v.clone() for k, v in emb.items()}
    emb2["premise"][0, 3:] = 1e3
    elmo2 = {k: v.clone() for k, v in elmo.items()}
    elmo2["hypothesis"][1, 2:] = -1e3
    assert torch.allclose(call(head, emb2, mask, elmo2, {}, {})["logits"], out["logits"], atol=1e-5)


def test_no_elmo_and_missing_elmo_error() -> None:
    head = Esim(D, 0, hidden_dim=4, projection_dim=None, mlp_dim=None, dropout=0.5).eval()
    emb, mask = _batch([2], [3], D, seed=3)
    assert call(head, emb, mask, {"premise": None, "hypothesis": None}, None, None)["logits"].shape == (1, 3)
    with_elmo = Esim(D, E, hidden_dim=4, projection_dim=None, mlp_dim=None, dropout=0.5)
    with pytest.raises(ValueError, match="elmo_output_dim=4 but the batch.s elmo_out.*none"):
        call(with_elmo, emb, mask)


def test_training_step_lowers_loss() -> None:
    torch.manual_seed(0)
    task = SnliTask()
    examples = [{"label": lab} for lab in ("entailment", "neutral", "contradiction", "neutral")]
    targets = task.targets(examples)
    assert targets["label"].tolist() == [0, 1, 2, 1]
    head = task.build_head({"hidden_dim": 8, "projection_dim": None, "mlp_dim": None, "dropout": 0.0}, {"premise": D, "hypothesis": D}, 0)
    emb, mask = _batch([4, 2, 5, 3], [3, 3, 1, 4], D, seed=4)
    losses = train_losses(head, lambda: call(head, emb, mask, None, None, targets)["loss"], steps=15, lr=0.01)
    assert losses[-1] < 0.5 * losses[0]
    preds = task.decode(call(head.eval(), emb, mask), examples)
    assert task.metric(preds, examples) == {"accuracy": 100.0}
