"""ScalarMix against values computed by hand."""
from __future__ import annotations

import math

import pytest
import torch

from elmo_bench.modules.elmo import Elmo
from elmo_bench.modules.scalar_mix import ScalarMix


def _layers() -> torch.Tensor:
    # batch 1, 2 layers, time 2, dim 2
    return torch.tensor([[[[1.0, 2.0], [3.0, 4.0]], [[10.0, 20.0], [30.0, 40.0]]]])


def test_initial_mix_is_uniform_average_times_gamma():
    mix = ScalarMix(2)
    out = mix(_layers())
    assert torch.allclose(out, torch.tensor([[[5.5, 11.0], [16.5, 22.0]]]))


def test_softmax_weights_and_gamma_by_hand():
    mix = ScalarMix(2)
    with torch.no_grad():
        mix.scalars.copy_(torch.tensor([0.0, math.log(3.0)]))  # softmax → [1/4, 3/4]
        mix.gamma.fill_(2.0)
    assert torch.allclose(mix.weights(), torch.tensor([0.25, 0.75]))
    expected = 2.0 * (0.25 * _layers()[0, 0] + 0.75 * _layers()[0, 1])
    assert torch.allclose(mix(_layers())[0], expected)


def test_penalty_is_lambda_times_squared_scalars():
    mix = ScalarMix(3, l2_coef=0.5)
    with torch.no_grad():
        mix.scalars.copy_(torch.tensor([1.0, -2.0, 0.5]))
    assert mix.penalty().item() == pytest.approx(0.5 * (1 + 4 + 0.25))
    assert ScalarMix(3, mode="average", l2_coef=0.5).penalty().item() == 0.0


def test_top_and_average_modes():
    top = ScalarMix(2, mode="top")
    assert torch.allclose(top(_layers()), _layers()[:, 1])
    assert not top.scalars.requires_grad and top.gamma.requires_grad
    avg = ScalarMix(2, mode="average")
    assert torch.allclose(avg(_layers()), _layers().mean(dim=1))


def test_layer_norm_uses_one_masked_mean_and_variance_per_layer():
    layers = torch.tensor([[[[1.0, 3.0], [100.0, 100.0]], [[2.0, 6.0], [-50.0, 7.0]]]])
    mask = torch.tensor([[True, False]])
    mix = ScalarMix(2, mode="top", layer_norm=True)
    # top layer, unmasked entries {2, 6}: mean 4, variance 4 → normalised (2-4)/2 = -1, (6-4)/2 = 1
    out = mix(layers, mask)
    assert torch.allclose(out[0, 0], torch.tensor([-1.0, 1.0]), atol=1e-5)
    # masked positions do not enter the statistics: changing them leaves the unmasked output unchanged
    layers2 = layers.clone()
    layers2[0, :, 1] = 1e4
    assert torch.allclose(mix(layers2, mask)[0, 0], out[0, 0])


def test_gradients_flow_to_scalars_and_gamma_only():
    mix = ScalarMix(2)
    mix(_layers()).sum().backward()
    assert mix.scalars.grad is not None and mix.gamma.grad is not None


def test_elmo_keeps_bilm_frozen_in_eval_mode():
    from elmo_bench.bilm.model import BiLM
    from elmo_bench.bilm.options import BiLMOptions

    options = BiLMOptions.from_dict({
        "char_cnn": {"filters": [[1, 4], [2, 4]], "n_highway": 1, "embedding": {"dim": 4}, "n_characters": 262,
                     "max_characters_per_token": 50, "activation": "relu"},
        "lstm": {"n_layers": 2, "dim": 8, "projection_dim": 4, "cell_clip": 3, "proj_clip": 3, "use_skip_connections": True},
    })
    elmo = Elmo(BiLM(options), num_mixes=2, dropout=0.0)
    elmo.train()
    assert not elmo.bilm.training
    assert all(not p.requires_grad for p in elmo.bilm.parameters())
    (mixed_in, mixed_out), mask = elmo([["a", "b"], ["c"]])
    assert mixed_in.shape == mixed_out.shape == (2, 2, 8)
    (mixed_in.sum() + mixed_out.sum()).backward()
    assert elmo.mixes[0].gamma.grad is not None


def test_single_layer_mode_for_probes():
    mix = ScalarMix(3, mode="layer", layer_index=1)
    layers = torch.arange(12.0).view(1, 3, 2, 2)
    assert torch.allclose(mix(layers), layers[:, 1])
    assert mix.weights().tolist() == [0.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="layer index"):
        ScalarMix(3, mode="layer", layer_index=3)
