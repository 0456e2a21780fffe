"""A user encoder for ``encoder=python`` tests: the same ~20-line example as docs/encoders.md."""
from __future__ import annotations

import hashlib

import torch


class HashingEncoder:
    """Two layers per word: a fixed random vector per word form, then the mean of its neighbours' vectors."""

    num_layers = 2

    def __init__(self, dim: int = 16, seed: int = 0) -> None:
        self.dim, self.seed = dim, seed

    def identity(self) -> dict:
        return {"kind": "hashing", "dim": self.dim, "seed": self.seed}

    def _vector(self, word: str) -> torch.Tensor:
        seed = int.from_bytes(hashlib.sha256(f"{self.seed}:{word}".encode()).digest()[:8], "little")
        return torch.randn(self.dim, generator=torch.Generator().manual_seed(seed))

    def layers(self, sentences):
        longest = max(len(s) for s in sentences)
        out = torch.zeros(len(sentences), 2, longest, self.dim)
        mask = torch.zeros(len(sentences), longest, dtype=torch.bool)
        for i, words in enumerate(sentences):
            vectors = torch.stack([self._vector(w) for w in words])
            padded = torch.nn.functional.pad(vectors, (0, 0, 1, 1))
            out[i, 0, : len(words)] = vectors
            out[i, 1, : len(words)] = (padded[:-2] + padded[2:]) / 2
            mask[i, : len(words)] = True
        return out, mask
