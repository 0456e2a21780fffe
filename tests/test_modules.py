"""Shared head components: masked BiLSTM/BiGRU (padding invariance vs an unpacked run), char CNN (hand values for
both paddings, ReLU order), masked softmax (hand values, fully masked rows)."""
from __future__ import annotations

import pytest
import torch
from helpers_heads import lengths_mask

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.modules import char_cnn as char_cnn_module
from elmo_bench.modules.char_cnn import CharCnn, trim_slots
from elmo_bench.modules.masked_rnn import MaskedBiRnn
from elmo_bench.modules.masked_softmax import masked_softmax


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_masked_birnn_matches_unpadded_run_and_ignores_padding(cell: str) -> None:
    torch.manual_seed(0)
    rnn = MaskedBiRnn(3, 4, cell)
    assert isinstance(rnn.rnn, torch.nn.LSTM if cell == "lstm" else torch.nn.GRU) and rnn.output_dim == 8
    lengths = [2, 5, 3]
    mask = lengths_mask(lengths)
    x = 100.0 * torch.randn(3, 5, 3)  # garbage everywhere, real steps overwritten below
    real = [torch.randn(n, 3) for n in lengths]
    for b, r in enumerate(real):
        x[b, : len(r)] = r
    out = rnn(x, mask)
    assert out.shape == (3, 5, 8)
    for b, r in enumerate(real):
        alone, _ = rnn.rnn(r[None])  # the plain torch module on the unpadded sequence: the backward pass starts at its end
        assert torch.allclose(out[b, : len(r)], alone[0], atol=1e-6), b
        assert (out[b, len(r):] == 0).all()


def test_masked_birnn_row_without_real_steps_is_zero_and_bad_cell_is_refused() -> None:
    rnn = MaskedBiRnn(2, 3, "gru")
    out = rnn(torch.randn(2, 4, 2), lengths_mask([0, 4]))
    assert (out[0] == 0).all() and out[1].abs().sum() > 0
    with pytest.raises(ValueError, match="cell must be one of"):
        MaskedBiRnn(2, 3, "rnn")  # type: ignore[arg-type]


def _hand_cnn(padding: str, bias: float) -> CharCnn:
    """char_dim 1, one filter of width 3 that reads the leftmost slot of its window; char id k embeds to k."""
    cnn = CharCnn(char_dim=1, filters=1, widths=3, padding=padding)  # type: ignore[arg-type]
    with torch.no_grad():
        cnn.embedding.weight.copy_(torch.arange(262, dtype=torch.float).unsqueeze(1))
        cnn.convs[0].weight.copy_(torch.tensor([[[1.0, 0.0, 0.0]]]))
        cnn.convs[0].bias.fill_(bias)
    return cnn


def test_char_cnn_hand_values_same_and_full_padding() -> None:
    chars = torch.tensor([[[1, 0, 0, 0, 9], [4, 2, 0, 0, 0]]])  # (batch 1, time 2, 5 slots)
    # "same": 1 zero each side, 5 windows starting at padded slots 0..4 → leftmost values [0,1,0,0,0] → max 1
    # "full": 2 zeros each side, 7 windows → leftmost values [0,0,1,0,0,0,9] → max 9
    assert _hand_cnn("same", 0.0)(chars).tolist() == [[[1.0], [4.0]]]
    assert _hand_cnn("full", 0.0)(chars).tolist() == [[[9.0], [4.0]]]
    assert _hand_cnn("full", -20.0)(chars).tolist() == [[[0.0], [0.0]]]  # ReLU
    cnn = CharCnn(char_dim=3, filters=4, widths=(2, 3, 5), padding="full")
    assert cnn(chars).shape == (1, 2, 12) and cnn.output_dim == 12
    assert (cnn.embedding.weight[0] == 0).all()  # id 0 is padding
    with pytest.raises(ValueError, match="padding must be"):
        CharCnn(2, 2, 3, padding="valid")  # type: ignore[arg-type]


def test_char_cnn_relu_after_max_equals_relu_before_max_with_gradients() -> None:
    torch.manual_seed(0)
    cnn = CharCnn(char_dim=4, filters=6, widths=3, padding="same")
    chars = torch.randint(0, 262, (2, 3, 7))
    out = cnn(chars)
    out.sum().backward()
    grads = [p.grad.clone() for p in cnn.parameters()]
    cnn.zero_grad()
    # reference: ReLU on every window, then the max (how the NER and SQuAD heads were written)
    x = cnn.embedding(chars.reshape(6, 7)).transpose(1, 2)
    ref = torch.relu(cnn.convs[0](x)).max(dim=2).values.view(2, 3, -1)
    ref.sum().backward()
    assert torch.equal(out, ref)
    # repeated words' gradients are summed in another order (distinct words go through the CNN once)
    assert all(torch.allclose(g, p.grad, atol=1e-6) for g, p in zip(grads, cnn.parameters()))


@pytest.mark.parametrize("padding", ["same", "full"])
@pytest.mark.parametrize("longest", [1, 7, 47, 48])
def test_char_cnn_over_distinct_words_and_trimmed_slots_equals_every_token_over_fifty_slots(padding: str, longest: int, monkeypatch) -> None:
    torch.manual_seed(0)
    cnn = CharCnn(char_dim=4, filters=5, widths=(2, 3, 5), padding=padding).double()
    sentences = [["a" * longest, "of", "x", "of"], ["bb", "x"]]     # repeated words, a padded token row
    chars = batch_to_ids(sentences)
    kept = trim_slots(chars, 5).shape[-1]
    assert kept == min(50, max(longest, 2) + 2 + 5)                  # BOW + bytes + EOW, then one window
    out = cnn(chars)
    out.sum().backward()
    grads = [p.grad.clone() for p in cnn.parameters()]
    cnn.zero_grad()
    monkeypatch.setattr(char_cnn_module, "trim_slots", lambda c, width: c)
    # reference: all 50 slots, every token on its own
    x = cnn.embedding(chars.reshape(-1, 50)).transpose(1, 2)
    ref = torch.relu(torch.cat([conv(x).max(dim=2).values for conv in cnn.convs], dim=1)).view(2, 4, -1)
    ref.sum().backward()
    assert torch.allclose(out, ref, atol=1e-12, rtol=0)
    assert all(torch.allclose(g, p.grad, atol=1e-12, rtol=0) for g, p in zip(grads, cnn.parameters()))


def test_trim_slots_keeps_every_slot_up_to_the_last_non_padding_id() -> None:
    chars = batch_to_ids([["ab"]])
    chars[0, 0, 30] = 7                                              # an id after the padding starts
    assert trim_slots(chars, 3).shape[-1] == 34                      # kept up to it, plus one window
    chars[0, 0, 49] = 9                                              # the last slot is no padding: keep all
    assert trim_slots(chars, 3) is chars


def test_masked_softmax_hand_values_and_fully_masked_row() -> None:
    scores = torch.log(torch.tensor([[1.0, 3.0, 100.0], [2.0, 2.0, 2.0]]))
    mask = torch.tensor([[True, True, False], [False, False, False]])
    weights = masked_softmax(scores, mask)
    assert torch.allclose(weights, torch.tensor([[0.25, 0.75, 0.0], [0.0, 0.0, 0.0]]))
    # over another axis, with a broadcast mask
    cols = masked_softmax(scores.T, torch.tensor([True, False]).view(1, 2), dim=0)
    assert torch.allclose(cols[:, 0], torch.tensor([1 / 104, 3 / 104, 100 / 104])) and (cols[:, 1] == 0).all()
