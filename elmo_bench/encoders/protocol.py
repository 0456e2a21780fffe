"""The one thing the cache, the mixes, the probes and ``embed`` need from a frozen encoder: layers per word.

An encoder sees sentences as the tasks tokenise them (lists of words) and returns, per word, every layer it has
(for the biLM: the context-free token layer plus one per LSTM layer; for a transformer: the embedding output plus
one per block). Everything that can change those vectors goes into :meth:`Encoder.identity`, which keys the
activation cache and is recorded in results.json, so two encoders that differ in any way never share an entry.

Two optional members (read with :func:`moved` and :func:`takes_whole_sequences`, so a user class may leave them
out): ``to(device)`` moves the encoder to where the run computes and returns it; ``whole_sequences = True`` says
the encoder copes with any length itself (a transformer's overlapping windows, a lookup in a file), so the cache
must not cut long sequences into ``max_segment`` pieces as it does for the biLM.
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


def moved(encoder: Encoder, device: torch.device | str) -> Encoder:
    """The encoder on ``device`` when it has a ``to`` (a module, the adapters here), else unchanged."""
    to = getattr(encoder, "to", None)
    return to(device) if callable(to) else encoder


def takes_whole_sequences(encoder: Encoder) -> bool:
    """True when the encoder handles long sequences itself (no segmenting by the cache)."""
    return bool(getattr(encoder, "whole_sequences", False))


def cache_id(encoder: Encoder) -> str:
    """The encoder's part of an activation cache key: its own ``cache_id()`` when it has one (the biLM keeps its bare
    weights hash, so entries written before encoders existed still hit), else ``<kind>-<sha256 of identity>``."""
    import hashlib
    import json

    own = getattr(encoder, "cache_id", None)
    if callable(own):
        return str(own())
    ident = encoder.identity()
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:16]
    kind = "".join(c if c.isalnum() else "_" for c in str(ident.get("kind", type(encoder).__name__)))
    return f"{kind}-{digest}"
