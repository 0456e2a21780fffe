"""The biLM kind's Encoder: the project's biLM (bilm-tf layout, elmo_bench.bilm) seen through the Encoder protocol.

Its identity is ``{"kind": "bilm", "hash": <bilm_identity of options + weights>}`` and its cache id is that hash
alone, exactly what the activation cache keyed on before encoders existed: every existing cache entry and
results.json stays valid. Layers are the biLM's own: the context-free token layer ``[x ; x]`` then one per LSTM
layer, sentence boundaries removed.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

import torch

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.model import BiLM


class BiLMEncoder:
    """A frozen :class:`BiLM` as an Encoder; ``hash`` is its ``bilm_identity`` (or any id the caller keys it by)."""

    whole_sequences = False  # the cache cuts long sequences into max_segment pieces, as it always did
    #: encoder.erase's identity when an eraser runs inside (elmo_bench.encoders.erasing); None = as trained
    erased: dict[str, Any] | None = None

    def __init__(self, bilm: BiLM, hash: str, info: dict[str, Any] | None = None) -> None:
        self.bilm, self.hash = bilm.eval(), hash
        self.info = dict(info or {})
        self.num_layers, self.dim = bilm.num_layers, bilm.output_dim

    def identity(self) -> dict[str, Any]:
        return {"kind": "bilm", "hash": self.hash, **self.erase_entry()}

    def erase_entry(self) -> dict[str, Any]:
        """``{"erase": ...}`` with an eraser inside, else nothing (the identity as before erasure existed)."""
        return {} if self.erased is None else {"erase": dict(self.erased)}

    def cache_id(self) -> str:
        """The activation cache's key part: the bare hash, as before the Encoder protocol (old entries stay hits);
        an eraser inside adds its digest."""
        if self.erased is None:
            return self.hash
        return f"{self.hash}-erase-{erase_digest(self.erased)}"

    def to(self, device: torch.device | str) -> "BiLMEncoder":
        self.bilm.to(device)
        return self

    @property
    def device(self) -> torch.device:
        return next(self.bilm.parameters()).device

    @torch.no_grad()
    def layers(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(batch, L+1, words, dim) float32 and (batch, words) mask, on the biLM's device."""
        output = self.bilm(batch_to_ids([list(s) for s in sentences]).to(self.device))
        return output.layers.float(), output.mask


def erase_digest(erased: dict[str, Any]) -> str:
    """16 hex digits of sha256 over the erase identity (sorted JSON)."""
    return hashlib.sha256(json.dumps(erased, sort_keys=True).encode()).hexdigest()[:16]


def load_bilm_encoder(options: str | Path, weights: str | Path, name: str | None = None) -> BiLMEncoder:
    """The biLM in ``options`` / ``weights`` (checked at load, elmo_bench.bilm.weights), with its record."""
    from elmo_bench.bilm.weights import bilm_identity, load_bilm  # lazy: h5py

    bilm = load_bilm(options, weights)
    hash_ = bilm_identity(options, weights)
    info = {"name": name, "options": str(options), "weights": str(weights), "hash": hash_,
            "layers": bilm.num_layers, "dim": bilm.output_dim}
    return BiLMEncoder(bilm, hash_, info)


def as_encoder(model: Any, hash: str | None = None) -> Any:
    """An Encoder for ``model``: a bare :class:`BiLM` is wrapped (keyed by ``hash``), anything else returned."""
    if isinstance(model, BiLM):
        return BiLMEncoder(model, hash or "unhashed-bilm")
    return model


def load_bilm_info(files: Any) -> tuple[Any, dict[str, Any]]:
    """The frozen biLM of the ``bilm`` group's files (weights checked: finite, no unused datasets, weights.sha256
    when present) and its record."""
    from elmo_bench.bilm.weights import bilm_identity, load_bilm  # lazy: h5py

    bilm = load_bilm(files.options, files.weights)
    info = {"name": files.name, "options": str(files.options), "weights": str(files.weights),
            "hash": bilm_identity(files.options, files.weights), "layers": bilm.num_layers,
            "dim": bilm.output_dim}
    return bilm, info
