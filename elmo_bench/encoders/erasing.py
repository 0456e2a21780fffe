"""Amnesic probing inside the forward pass (Elazar et al. 2021 with LEACE erasers, issue 47 item 3): an eraser that
``probe=erasure`` fitted is applied to layer k's output *inside* the encoder, so every later layer is recomputed from
the erased one.

Each kind that can erase declares how (its ``erasure``: the layers, the streams and their widths, where the eraser
goes; elmo_bench.encoders.kinds):

- The biLM: layer k is ``[forward; backward]``, so the in-model erasers are fitted per stream (``probe=erasure``
  saves them under ``streams`` for a biLM: the token layer on its own vector, layer k's forward and backward halves
  apart) and applied in :class:`~elmo_bench.bilm.lstm.BiLstmStack`'s forward after the residual add, on word
  positions only (``<S>``, ``</S>`` and padding untouched: padding stays zero).
- A Hugging Face model (transformers/erase.py): a forward pre-hook on block k erases its input (hidden state k) at every position but the
  special tokens and padding; the reported layer k is erased the same way (the eraser is idempotent).
- Controls: ``random`` keeps the fitted eraser's whitening and mean and replaces its frame (the whitened class
  directions) by a random orthonormal frame of the same rank r; ``orth`` is amnesic probing's own control: r random
  directions uniform in [-0.5, 0.5)^d projected out orthogonally (no mean).

The eraser's identity (concept, layer, control, seed, a digest of the file) joins the encoder's identity and cache
key; with erasure off nothing changes.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.erase_settings import erasable, eraser_file, refuse_layer
from elmo_bench.encoders.kinds import encoder_kinds
from elmo_bench.encoders.protocol import cache_id


@dataclass(frozen=True)
class Affine:
    """x ↦ x − ((x − bias) Rᵀ) Lᵀ: LEACE's form (``proj_left`` L (d, m), ``proj_right`` R (m, d), bias (d,) or
    None), float64 on the CPU; applied in the input's dtype and device."""

    left: torch.Tensor
    right: torch.Tensor
    bias: torch.Tensor | None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        left, right = self.left.to(x), self.right.to(x)
        delta = x - self.bias.to(x) if self.bias is not None else x
        return x - (delta @ right.T) @ left.T

    @property
    def dim(self) -> int:
        return int(self.left.shape[0])

    def rank(self) -> int:
        """The rank of the change (the erased subspace's dimension)."""
        return int(torch.linalg.matrix_rank(self.left @ self.right))

    def variance_share(self, sigma: torch.Tensor) -> float:
        """The share of the total variance (trace of ``sigma``) the eraser removes: 1 − tr(P Σ Pᵀ) / tr(Σ)."""
        p = torch.eye(self.dim, dtype=torch.float64) - self.left @ self.right
        return float(1.0 - torch.trace(p @ sigma @ p.T) / torch.trace(sigma))


def whitening(sigma: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(W, W⁺) = (Σ^{-1/2}, Σ^{1/2}) on Σ's numerical range (eigenvalues below torch.linalg.pinv's threshold set to
    zero), as LEACE whitens."""
    values, vectors = torch.linalg.eigh(sigma)
    kept = values > values[-1] * sigma.shape[-1] * torch.finfo(values.dtype).eps
    values = values.clamp_min(0.0)
    inverse_root = torch.where(kept, values.rsqrt(), torch.zeros_like(values))
    root = torch.where(kept, values.sqrt(), torch.zeros_like(values))
    return (vectors * inverse_root) @ vectors.T, (vectors * root) @ vectors.T


def random_control(fitted: Affine, sigma: torch.Tensor, seed: int) -> Affine:
    """The fitted eraser's whitening and mean on a random orthonormal frame U (d, r) of its rank r inside the
    whitened range: L = W⁺U, R = UᵀW (Gaussian draw under ``seed``, orthonormalised by QR)."""
    whiten, unwhiten = whitening(sigma)
    generator = torch.Generator().manual_seed(seed)
    draw = torch.randn(fitted.dim, fitted.rank(), generator=generator, dtype=torch.float64)
    frame, _ = torch.linalg.qr(whiten @ unwhiten @ draw)  # W W⁺: the projector on the whitened range
    return Affine(unwhiten @ frame, frame.T @ whiten, fitted.bias)


def orth_control(dim: int, rank: int, seed: int) -> Affine:
    """Amnesic probing's random control: ``rank`` directions uniform in [-0.5, 0.5)^dim, their span projected out
    (x ↦ x − Q Qᵀ x, Q an orthonormal basis of the span; no mean)."""
    generator = torch.Generator().manual_seed(seed)
    directions = torch.rand(rank, dim, generator=generator, dtype=torch.float64) - 0.5
    basis, _ = torch.linalg.qr(directions.T)
    return Affine(basis, basis.T, None)


@dataclass(frozen=True)
class InModelEraser:
    """The erasers of one layer inside the model: one per stream (biLM: the token layer's or layer k's forward and
    backward; a transformer: one), what they remove (shares of variance) and the identity the encoder records."""

    layer: int
    streams: tuple[Affine, ...]
    identity: dict[str, Any]
    shares: dict[str, list[float]]

    def rank(self) -> list[int]:
        return [stream.rank() for stream in self.streams]

    def directions(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The biLM stack's (directions, batch, time, P) with their word positions erased (called by
        BiLstmStack.forward): the token layer's eraser on every direction (layer 0), else the forward eraser on
        direction 0 and the backward one on direction 1; ``<S>``, ``</S>`` and padding untouched."""
        keep = word_positions(lengths, x.shape[2]).unsqueeze(-1)
        streams = self.streams if len(self.streams) == 2 else self.streams * 2
        return torch.stack([torch.where(keep, streams[d](x[d]), x[d]) for d in range(x.shape[0])])


def _stream(saved: Mapping[str, Any]) -> tuple[Affine, torch.Tensor]:
    """One saved eraser (proj_left, proj_right, bias, sigma) as an Affine in float64, and its covariance."""
    def f64(t: Any) -> torch.Tensor:
        return t.detach().to("cpu", torch.float64)

    if "sigma" not in saved:
        raise ConfigError("config: encoder.erase.path: the eraser has no covariance (sigma); refit it with today's "
                          "probe=erasure")
    bias = saved["bias"]
    return Affine(f64(saved["proj_left"]), f64(saved["proj_right"]), None if bias is None else f64(bias)), \
        f64(saved["sigma"])


def _check_identity(found: Path, identity: Mapping[str, Any], spec: Mapping[str, Any], encoder_hash: str) -> None:
    """The saved eraser must be the asked concept's, for this encoder's weights and this layer (one line each)."""
    for key, want in (("encoder", encoder_hash), ("layer", spec["layer"]), ("concept", spec["concept"])):
        if identity[key] != want:
            raise ConfigError(f"config: encoder.erase.path {found}: eraser fitted for {key} {identity[key]!r}, this "
                              f"run asks {want!r} (refit with probe=erasure on this encoder)")
    if len(identity["classes"]) < 2:
        raise ConfigError(f"config: encoder.erase.path {found}: the concept {spec['concept']} has "
                          f"{len(identity['classes'])} class in training; nothing to erase")


def _controlled(fitted: Affine, sigma: torch.Tensor, control: str, seed: int) -> Affine:
    """The eraser the run applies: the fitted one (``none``) or its control of the same rank."""
    if control == "random":
        return random_control(fitted, sigma, seed)
    if control == "orth":
        return orth_control(fitted.dim, fitted.rank(), seed)
    return fitted


def load_in_model(spec: Mapping[str, Any], encoder_hash: str, widths: list[int]) -> InModelEraser:
    """The in-model eraser ``encoder.erase`` asks for (checked ``spec``: elmo_bench.encoders.erase_settings), from
    the file probe=erasure saved: per stream for a biLM (``widths`` = each stream's width: [P] for the token layer,
    [P, P] for an LSTM layer), the whole layer otherwise ([dim]). ConfigError (one line) for another encoder's,
    layer's or concept's eraser, another width, or a biLM eraser saved without its streams."""
    found = eraser_file(spec["path"], spec["layer"])
    saved = torch.load(found, map_location="cpu", weights_only=False)
    _check_identity(found, saved["identity"], spec, encoder_hash)
    per_stream = len(widths) > 1 or "streams" in saved
    if per_stream and "streams" not in saved:
        raise ConfigError(f"config: encoder.erase.path {found}: no per-stream erasers (a biLM needs them; refit with "
                          f"today's probe=erasure)")
    parts = [_stream(s) for s in saved["streams"]] if per_stream else [_stream(saved)]
    have = [fitted.dim for fitted, _ in parts]
    if have != widths:
        raise ConfigError(f"config: encoder.erase.path {found}: eraser width {have}, the encoder's layer "
                          f"{spec['layer']} has {widths} (an eraser of another encoder)")
    # stream i of seed s draws under s * streams + i: no two seeds or streams share a draw
    applied = [_controlled(fitted, sigma, spec["control"], spec["seed"] * len(parts) + i) for i, (fitted, sigma) in
               enumerate(parts)]
    shares = {"fitted": [f.variance_share(s) for f, s in parts],
              "applied": [a.variance_share(s) for a, (_, s) in zip(applied, parts)]}
    digest = hashlib.sha256(found.read_bytes()).hexdigest()[:16]
    identity = {"concept": spec["concept"], "layer": spec["layer"], "control": spec["control"],
                **({"seed": spec["seed"]} if spec["control"] != "none" else {}), "eraser": digest}
    return InModelEraser(spec["layer"], tuple(applied), identity, shares)


def word_positions(lengths: torch.Tensor, time: int) -> torch.Tensor:
    """(batch, time) bool: the biLM's word positions 1 .. length − 2 (``<S>`` at 0 and ``</S>`` at length − 1 are
    left alone, as a transformer's special tokens are; padding too). Holds in forward and in reversed order."""
    at = torch.arange(time, device=lengths.device).unsqueeze(0)
    return (at >= 1) & (at <= (lengths - 2).unsqueeze(1))



def stream_widths(encoder: Any, layer: int) -> list[int]:
    """Each stream's width at ``layer``, as the encoder's kind declares it (the biLM: [P] for the token layer, [P, P]
    for an LSTM layer; a transformer: [dim]); ConfigError when the layer is outside the encoder (above its kind's
    ``erasure.top``) or the kind erases nothing."""
    kind = encoder_kinds()[str(encoder.identity()["kind"])]
    if kind.erasure is None:
        raise ConfigError(f"config: encoder.erase applies to encoder={'|'.join(erasable())} (the forward pass runs "
                          f"here), found encoder={kind.name}")
    refuse_layer(layer, kind.name, kind.erasure.top(encoder), kind.erasure.note)
    return kind.erasure.widths(encoder, layer)


def apply_erase(encoder: Any, spec: Mapping[str, Any] | None) -> Any:
    """``encoder`` with ``encoder.erase`` (checked settings; None = off: returned untouched) running inside its
    forward pass; its identity and cache key then carry the erase identity and its record the shares of variance
    the fitted and the applied eraser remove."""
    if spec is None:
        return encoder
    widths = stream_widths(encoder, spec["layer"])
    eraser = load_in_model(spec, cache_id(encoder), widths)  # what probe=erasure recorded as the encoder
    encoder_kinds()[str(encoder.identity()["kind"])].erasure.install(encoder, eraser)
    encoder.erased = eraser.identity
    info = getattr(encoder, "info", None)
    if isinstance(info, dict):
        info["erase"] = {**eraser.identity, "rank": eraser.rank(), "variance_share": eraser.shares}
    return encoder
