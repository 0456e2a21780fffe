"""Constrained Viterbi vs brute force, and the deep highway BiLSTM head (shapes, directions, padding, a falling loss)."""
from __future__ import annotations

import itertools

import pytest
import torch
from helpers_heads import train_losses

from elmo_bench.tasks.srl.decode import allowed_transitions, decode_batch, is_valid_bio, viterbi
from elmo_bench.tasks.srl.model import SrlHead, reverse_padded
from tests.helpers_heads import call

LABELS = ["O", "B-A0", "I-A0", "B-A1", "I-A1", "B-V"]


def brute_force(scores: torch.Tensor) -> list[int]:
    best, best_path = None, None
    for path in itertools.product(range(len(LABELS)), repeat=scores.shape[0]):
        if not is_valid_bio([LABELS[i] for i in path]):
            continue
        s = float(sum(scores[t, i] for t, i in enumerate(path)))
        if best is None or s > best:
            best, best_path = s, list(path)
    return best_path


def test_validity_rule() -> None:
    assert is_valid_bio(["B-A0", "I-A0", "O", "B-A1", "I-A1"])
    assert not is_valid_bio(["I-A0"])
    assert not is_valid_bio(["O", "I-A0"])
    assert not is_valid_bio(["B-A1", "I-A0"])
    assert not is_valid_bio(["B-A0", "I-A0", "I-A1"])


@pytest.mark.parametrize("t_len", [1, 2, 3, 4, 5])
def test_viterbi_equals_brute_force(t_len: int) -> None:
    gen = torch.Generator().manual_seed(t_len)
    start_ok, trans_ok = allowed_transitions(LABELS)
    for _ in range(8):
        scores = torch.randn(t_len, len(LABELS), generator=gen) * 3
        assert viterbi(scores, start_ok, trans_ok) == brute_force(scores)


def test_decoded_sequences_always_valid() -> None:
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(16, 12, len(LABELS), generator=gen) * 5
    logits[..., 2] += 4  # push I-A0 everywhere: the constraints must still hold
    for tags in decode_batch(logits, [12, 7, 1] + [12] * 13, LABELS):
        assert is_valid_bio(tags)


def test_reverse_padded() -> None:
    x = torch.arange(8.).view(2, 4, 1)
    out = reverse_padded(x, torch.tensor([4, 2]))
    assert out[..., 0].tolist() == [[3, 2, 1, 0], [5, 4, 6, 7]]


def make_head(layers: int = 2, elmo_dim: int = 0) -> SrlHead:
    torch.manual_seed(0)
    return SrlHead(input_dim=6, n_labels=len(LABELS), hidden=8, layers=layers, predicate_dim=4,
                   recurrent_dropout=0.1, elmo_output_dim=elmo_dim)


def test_shapes_and_padding_invariance() -> None:
    head = make_head(layers=3, elmo_dim=5).eval()
    x = torch.randn(2, 7, 6)
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[1, 4:] = False
    ind = torch.zeros(2, 7, dtype=torch.long)
    ind[:, 1] = 1
    elmo = torch.randn(2, 7, 5)
    out = call(head, {"tokens": x}, {"tokens": mask}, {"tokens": elmo}, {}, {"predicate_indicator": ind})
    assert out["logits"].shape == (2, 7, len(LABELS))
    assert "loss" not in out
    # row 1 alone, without padding, gives the same logits on its 4 words (backward layers start at the last word)
    alone = call(head, {"tokens": x[1:, :4]}, {"tokens": mask[1:, :4]}, {"tokens": elmo[1:, :4]}, {},
                 {"predicate_indicator": ind[1:, :4]})
    assert torch.allclose(alone["logits"][0], out["logits"][1, :4], atol=1e-5)


def test_layer_directions_alternate() -> None:
    head = make_head(layers=2).eval()
    x = torch.randn(1, 6, 6)
    x2 = x.clone()
    x2[0, 5] += 1.0  # change the last word
    ind = torch.zeros(1, 6, dtype=torch.long)
    h0 = torch.cat([x, head.predicate_embedding(ind)], -1)
    h0b = torch.cat([x2, head.predicate_embedding(ind)], -1)
    # layer 1 runs forward: outputs before word 5 do not see the change
    assert torch.allclose(head.layers[0](h0)[0, :5], head.layers[0](h0b)[0, :5])
    # the whole head (layer 2 backward) lets the change reach word 0
    m = {"tokens": torch.ones(1, 6, dtype=torch.bool)}
    a = call(head, {"tokens": x}, m, None, None, {"predicate_indicator": ind})["logits"]
    b = call(head, {"tokens": x2}, m, None, None, {"predicate_indicator": ind})["logits"]
    assert not torch.allclose(a[0, 0], b[0, 0])


def test_tiny_training_step_loss_falls() -> None:
    head = make_head(layers=2)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(4, 5, 6, generator=gen)
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[2, 3:] = False
    ind = torch.zeros(4, 5, dtype=torch.long)
    ind[torch.arange(4), torch.tensor([0, 2, 1, 4])] = 1
    tags = torch.randint(0, len(LABELS), (4, 5), generator=gen)
    targets = {"predicate_indicator": ind, "tags": tags}
    losses = train_losses(head, lambda: call(head, {"tokens": x}, {"tokens": mask}, None, None, targets)["loss"],
                          steps=30, lr=0.02)
    assert losses[-1] < 0.5 * losses[0]
