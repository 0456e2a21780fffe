"""The per-task layer mix of the paper (eq. 1) and the ``Elmo`` module that owns a frozen biLM.

``ELMo_task = gamma_task * sum_j softmax(s_task)_j * h_j``. Each task learns its own ``s_task`` (pre-softmax scalars,
initialised to 0 so the mix starts uniform) and ``gamma_task`` (initialised to ``gamma_init``, 1 by default), separately for every place it
uses ELMo (input, output). The regulariser ``lambda * ||s||^2`` acts on the pre-softmax scalars, as bilm-tf's
``l2_coef``. Optional layer norm follows bilm-tf: one mean and one variance per layer over the whole masked batch
tensor (not per token).
"""
from __future__ import annotations

from typing import Any, Sequence

import torch
from torch import nn

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.model import BiLM
from elmo_bench.records.elmo_settings import MODES



class ScalarMix(nn.Module):
    """Mixes (batch, layers, time, dim) into (batch, time, dim).

    mode ``learned``: trainable softmax weights; ``average``: fixed equal weights; ``top``: the last layer only;
    ``layer``: layer ``layer_index`` only (probing one layer). gamma is trainable in every mode.
    """

    def __init__(self, num_layers: int, mode: str = "learned", layer_norm: bool = False, l2_coef: float = 0.0,
                 layer_index: int | None = None, gamma_init: float = 1.0) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"ScalarMix mode expected one of {MODES}, found {mode!r}")
        if mode == "top":
            layer_index = num_layers - 1
        if mode in ("layer", "top") and (layer_index is None or not -num_layers <= layer_index < num_layers):
            raise ValueError(f"ScalarMix mode 'layer' expected a layer index in [0, {num_layers}), found {layer_index}")
        self.num_layers, self.mode, self.layer_norm, self.l2_coef = num_layers, mode, layer_norm, l2_coef
        self.layer_index = None if layer_index is None else layer_index % num_layers
        self.scalars = nn.Parameter(torch.zeros(num_layers), requires_grad=mode == "learned")
        self.gamma = nn.Parameter(torch.full((1,), float(gamma_init)))

    def weights(self) -> torch.Tensor:
        """The normalised layer weights (num_layers,) actually applied."""
        if self.layer_index is not None:
            weights = torch.zeros(self.num_layers, device=self.scalars.device)
            weights[self.layer_index] = 1.0
            return weights
        return torch.softmax(self.scalars, dim=0)

    def penalty(self) -> torch.Tensor:
        """lambda * ||s||^2 on the pre-softmax scalars (zero unless the mix is learned)."""
        if self.mode != "learned" or self.l2_coef == 0.0:
            return self.scalars.new_zeros(())
        return self.l2_coef * (self.scalars ** 2).sum()

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


class Elmo(nn.Module):
    """The one "frozen biLM + mixes + dropout" module: ``num_mixes`` independent ScalarMixes (e.g. a task's input
    and output), each followed by the ELMo dropout; the only place ELMo is dropped.

    ``bilm`` is the frozen biLM or any other Encoder (elmo_bench.encoders.protocol: a transformer, a user class),
    whose ``num_layers`` sets the mixes' size. It may be None when the layers arrive precomputed (the engine reads them from the activation cache); then
    ``num_layers`` says how many there are and only :meth:`mix` is available. ``names`` labels the mixes (the
    engine uses "input" / "output"); by default they are "0", "1", ...
    """

    def __init__(self, bilm: Any, num_mixes: int = 1, mode: str = "learned", layer_norm: bool = False,
                 l2_coef: float = 0.0, dropout: float = 0.5, *, num_layers: int | None = None,
                 layer_index: int | None = None, gamma_init: float = 1.0, names: Sequence[str] | None = None) -> None:
        super().__init__()
        self.bilm = bilm
        if bilm is not None:
            for parameter in (bilm.parameters() if isinstance(bilm, nn.Module) else ()):
                parameter.requires_grad_(False)
            num_layers = bilm.num_layers
        if num_layers is None:
            raise ValueError("Elmo without a biLM needs num_layers (the number of precomputed layers)")
        self.names = list(names) if names is not None else [str(i) for i in range(num_mixes)]
        self.mixes = nn.ModuleList(
            ScalarMix(num_layers, mode=mode, layer_norm=layer_norm, l2_coef=l2_coef, layer_index=layer_index,
                      gamma_init=gamma_init) for _ in self.names)
        self.dropout = nn.Dropout(dropout)

    def train(self, mode: bool = True) -> "Elmo":
        super().train(mode)
        if isinstance(self.bilm, nn.Module):
            self.bilm.eval()  # frozen: never dropout, never a training-mode cache reset
        return self

    @torch.no_grad()
    def layers(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """The biLM's (or encoder's) (batch, L+1, time, dim) layers and (batch, time) mask for tokenised sentences."""
        if self.bilm is None:
            raise ValueError("this Elmo has no biLM (its layers come precomputed): call mix(layers, mask)")
        if not isinstance(self.bilm, BiLM):  # any other Encoder computes its own layers
            return self.bilm.layers(sentences)
        device = next(self.bilm.parameters()).device  # the characters follow the biLM's device
        output = self.bilm(batch_to_ids(sentences).to(device))
        return output.layers, output.mask

    def mix(self, layers: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
        """Every mix of precomputed layers (batch, L+1, time, dim), each dropped once: list of (batch, time, dim)."""
        return [self.dropout(m(layers, mask)) for m in self.mixes]

    def mixed(self, layers: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """:meth:`mix` by mix name."""
        return dict(zip(self.names, self.mix(layers, mask)))

    def forward(self, sentences: Sequence[Sequence[str]]) -> tuple[list[torch.Tensor], torch.Tensor]:
        layers, mask = self.layers(sentences)
        return self.mix(layers, mask), mask

    def penalty(self) -> torch.Tensor:
        """lambda * ||s||^2 summed over the mixes."""
        first = next(self.parameters(), None)  # the zero follows the module's device
        zero = torch.zeros((), device=first.device if first is not None else None)
        return sum((m.penalty() for m in self.mixes), zero)

    def summary(self) -> dict[str, dict]:
        """Learned softmax layer weights and gamma of every mix by name, for results.json and Figure 2."""
        return {name: {"weights": [round(float(w), 6) for w in m.weights().detach()], "gamma": m.gamma.item(),
                       "mode": m.mode, "layer_norm": m.layer_norm, "lambda": m.l2_coef}
                for name, m in zip(self.names, self.mixes)}
