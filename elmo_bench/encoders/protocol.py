"""The one thing the cache, the mixes, the probes and ``embed`` need from a frozen encoder: layers per word.

An encoder sees sentences as the tasks tokenise them (lists of words) and returns, per word, every layer it has
(for the biLM: the context-free token layer plus one per LSTM layer; for a transformer: the embedding output plus
one per block). Everything that can change those vectors goes into :meth:`Encoder.identity`, which keys the
activation cache and is recorded in results.json, so two encoders that differ in any way never share an entry.

Three optional members (read with :func:`moved`, :func:`takes_whole_sequences` and :func:`packed`, so a user class
may leave them out): ``to(device)`` moves the encoder to where the run computes and returns it; ``whole_sequences =
True`` says the encoder copes with any length itself (a transformer's overlapping windows, a lookup in a file), so
the cache must not cut long sequences into ``max_segment`` pieces as it does for the biLM; ``packed_layers(sentences)``
gives the same vectors without padding, (words, num_layers, dim) with the sentences' words one after another, the
activation cache's own row layout, so a cache fill need not build and then gather the padded tensor.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import torch

from elmo_bench.base.errors import ConfigError


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


def encoder_name(encoder: Encoder) -> str:
    """A short name of the encoder for messages: its model, file or class, else its kind."""
    try:
        ident = encoder.identity()
    except Exception:  # a broken user class: its type is name enough
        return type(encoder).__name__
    kind = str(ident.get("kind", type(encoder).__name__))
    for key in ("model", "file", "target", "name"):
        if ident.get(key):
            return f"{kind} {ident[key]}"
    return kind


def check_layers(encoder: Encoder, sentences: Sequence[Sequence[str]], layers: torch.Tensor,
                 mask: torch.Tensor) -> None:
    """ConfigError (one line) when an encoder's output breaks the protocol's shapes (a user class, say)."""
    name = encoder_name(encoder)
    if not isinstance(layers, torch.Tensor) or not isinstance(mask, torch.Tensor):
        raise ConfigError(f"encoder {name} returned {type(layers).__name__} and {type(mask).__name__}, expected "
                          f"two torch tensors (layers, mask)")
    longest = max((len(s) for s in sentences), default=0)
    expected = (len(sentences), encoder.num_layers, longest, encoder.dim)
    if tuple(layers.shape) != expected:
        raise ConfigError(f"encoder {name} returned layers of shape {tuple(layers.shape)}, expected "
                          f"(batch, layers, words, dim) = {expected} (it states num_layers={encoder.num_layers}, "
                          f"dim={encoder.dim})")
    if tuple(mask.shape) != expected[:1] + expected[2:3]:
        raise ConfigError(f"encoder {name} returned a mask of shape {tuple(mask.shape)}, expected "
                          f"{expected[:1] + expected[2:3]}")


def packed(encoder: Encoder) -> Callable[[Sequence[Sequence[str]]], torch.Tensor] | None:
    """The encoder's ``packed_layers`` when it has one, else None (the cache then uses :meth:`Encoder.layers`)."""
    method = getattr(encoder, "packed_layers", None)
    return method if callable(method) else None


def check_packed(encoder: Encoder, sentences: Sequence[Sequence[str]], layers: torch.Tensor) -> None:
    """:func:`check_layers` for ``packed_layers``' output: (words of all sentences, num_layers, dim)."""
    expected = (sum(len(s) for s in sentences), encoder.num_layers, encoder.dim)
    if not isinstance(layers, torch.Tensor) or tuple(layers.shape) != expected:
        found = tuple(layers.shape) if isinstance(layers, torch.Tensor) else type(layers).__name__
        raise ConfigError(f"encoder {encoder_name(encoder)} returned packed layers of shape {found}, expected "
                          f"(words, layers, dim) = {expected} (it states num_layers={encoder.num_layers}, "
                          f"dim={encoder.dim})")


def check_values(encoder: Encoder, layers: torch.Tensor, limit: float | None = None) -> None:
    """ConfigError (one line) when a batch of layers (batch, layers, words, dim), or packed ones (words, layers,
    dim), holds a value that is not finite, or, with ``limit`` (fp16's 65504 for the fp16 cache), one beyond
    +-limit: such layers are never trusted. One pass (the smallest and largest value, nan propagating) clears the
    usual batch; only a failing one is examined layer by layer, for the message."""
    if layers.numel() == 0:
        return
    low, high = (float(v) for v in torch.aminmax(layers.detach().float()))
    if math.isfinite(low) and math.isfinite(high) and (limit is None or max(-low, high) <= limit):
        return
    per_layer = layers.detach().float().abs().transpose(0, 1).reshape(layers.shape[1], -1)  # (layers, values)
    finite = torch.isfinite(per_layer).all(dim=1)
    if not bool(finite.all()):
        layer = int((~finite).nonzero()[0])
        raise ConfigError(f"encoder {encoder_name(encoder)}: layer {layer} of its output is not finite (nan or "
                          f"inf); its layers are not used")
    if limit is not None and per_layer.numel():
        largest, layer = per_layer.max(dim=1).values.max(dim=0)
        if float(largest) > limit:
            raise ConfigError(f"encoder {encoder_name(encoder)}: layer {int(layer)} reaches {float(largest):.6g}, "
                              f"beyond the fp16 activation cache's range (+-{limit:g}); set "
                              f"encoder.cache_dtype=fp32")


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
