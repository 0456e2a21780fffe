"""The one thing the cache, the mixes, the probes and ``embed`` need from a frozen encoder: layers per word.

An encoder sees sentences as the tasks tokenise them (lists of words) and returns, per word, every layer it has
(for the biLM: the context-free token layer plus one per LSTM layer; for a transformer: the embedding output plus
one per block). Everything that can change those vectors goes into :meth:`Encoder.identity`, which keys the
activation cache and is recorded in results.json, so two encoders that differ in any way never share an entry.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import torch


@runtime_checkable
class Encoder(Protocol):
    """A frozen encoder of word lists.

    ``num_layers`` counts every layer :meth:`layers` returns (ELMo's L+1); ``dim`` is their common width.
    """

    num_layers: int
    dim: int

    def identity(self) -> dict[str, Any]:
        """JSON-serialisable description of everything that changes the vectors (kind, weights hash, pooling...)."""
        ...

    def layers(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Layers of a batch of word lists.

        Returns ``layers`` (batch, num_layers, words, dim) float32 on the encoder's device, zero past each
        sentence's end, and ``mask`` (batch, words) bool, True on real words.
        """
        ...


def check_layers(encoder: Encoder, sentences: Sequence[Sequence[str]], layers: torch.Tensor,
                 mask: torch.Tensor) -> None:
    """Raise ValueError when an encoder's output breaks the protocol's shapes (a user class, say)."""
    longest = max((len(s) for s in sentences), default=0)
    expected = (len(sentences), encoder.num_layers, longest, encoder.dim)
    if tuple(layers.shape) != expected:
        raise ValueError(f"encoder {encoder.identity().get('kind', type(encoder).__name__)} returned layers of "
                         f"shape {tuple(layers.shape)}, expected (batch, layers, words, dim) = {expected}")
    if tuple(mask.shape) != expected[:1] + expected[2:3]:
        raise ValueError(f"encoder returned a mask of shape {tuple(mask.shape)}, expected {expected[:1] + expected[2:3]}")
