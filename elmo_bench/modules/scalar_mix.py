"""The per-task layer mix of the paper (eq. 1), AllenNLP's ``ScalarMix``.

``ELMo_task = gamma_task * sum_j softmax(s_task)_j * h_j``. Each task learns its own ``s_task`` (pre-softmax scalars,
initialised to 0 so the mix starts uniform) and ``gamma_task`` (initialised to ``gamma_init``, 1 by default), separately for every place it
uses ELMo (input, output). The regulariser ``lambda * ||s||^2`` acts on the pre-softmax scalars, as bilm-tf's
``l2_coef``. Optional layer norm follows bilm-tf: one mean and one variance per layer over the whole masked batch
tensor (not per token).
"""
from __future__ import annotations

import torch
from torch import nn

from elmo_bench.records.elmo_settings import MODES


class ScalarMix(nn.Module):
    """Mixes (batch, layers, time, dim) into (batch, time, dim).

    mode ``learned``: trainable softmax weights; ``average``: fixed equal weights; ``top``: the last layer only;
    ``layer``: layer ``layer_index`` only (probing one layer); ``cumulative``: trainable softmax weights over layers
    0..``layer_index`` only, the others weighted 0 (edge probing's cumulative scoring: each prefix its own probe).
    gamma is trainable in every mode.
    """

    def __init__(self, num_layers: int, mode: str = "learned", layer_norm: bool = False, l2_coef: float = 0.0,
                 layer_index: int | None = None, gamma_init: float = 1.0) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"ScalarMix mode expected one of {MODES}, found {mode!r}")
        if mode == "top":
            layer_index = num_layers - 1
        if mode in ("layer", "top", "cumulative") and (layer_index is None or not -num_layers <= layer_index < num_layers):
            raise ValueError(f"ScalarMix mode {mode!r} expected a layer index in [0, {num_layers}), found {layer_index}")
        self.num_layers, self.mode, self.layer_norm, self.l2_coef = num_layers, mode, layer_norm, l2_coef
        #: layers 0..prefix-1 are mixed (all of them unless cumulative)
        self.prefix = num_layers if mode != "cumulative" else layer_index % num_layers + 1
        if mode == "cumulative":
            layer_index = None
        self.layer_index = None if layer_index is None else layer_index % num_layers
        self.scalars = nn.Parameter(torch.zeros(num_layers), requires_grad=mode in ("learned", "cumulative"))
        self.gamma = nn.Parameter(torch.full((1,), float(gamma_init)))

    def weights(self) -> torch.Tensor:
        """The normalised layer weights (num_layers,) actually applied."""
        if self.layer_index is not None:
            weights = torch.zeros(self.num_layers, device=self.scalars.device)
            weights[self.layer_index] = 1.0
            return weights
        if self.prefix < self.num_layers:  # cumulative: a softmax over the prefix, zeros above it
            return torch.cat([torch.softmax(self.scalars[: self.prefix], dim=0),
                              self.scalars.new_zeros(self.num_layers - self.prefix)])
        return torch.softmax(self.scalars, dim=0)

    def penalty(self) -> torch.Tensor:
        """lambda * ||s||^2 on the pre-softmax scalars (zero unless the mix is learned)."""
        if self.mode not in ("learned", "cumulative") or self.l2_coef == 0.0:
            return self.scalars.new_zeros(())
        return self.l2_coef * (self.scalars[: self.prefix] ** 2).sum()

    def forward(self, layers: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """layers (batch, num_layers, time, dim), mask (batch, time) → (batch, time, dim)."""
        if layers.shape[1] != self.num_layers:
            raise ValueError(f"ScalarMix expected {self.num_layers} layers, found {layers.shape[1]}")
        if self.layer_norm:
            if mask is None:
                mask = torch.ones(layers.shape[0], layers.shape[2], dtype=torch.bool, device=layers.device)
            layers = _masked_layer_norm(layers, mask)
        weights = self.weights().to(layers.dtype)
        return self.gamma * torch.einsum("l,bltd->btd", weights, layers)


def _masked_layer_norm(layers: torch.Tensor, mask: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """bilm-tf ``_do_ln``: per layer, one mean and variance over all unmasked (token, dim) entries of the batch."""
    m = mask[:, None, :, None].to(layers.dtype)  # (batch, 1, time, 1)
    count = m.sum() * layers.shape[-1]
    mean = (layers * m).sum(dim=(0, 2, 3), keepdim=True) / count
    variance = (((layers - mean) * m) ** 2).sum(dim=(0, 2, 3), keepdim=True) / count
    return (layers - mean) / torch.sqrt(variance + eps)
