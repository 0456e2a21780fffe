"""The biLM's random-weights twins (``bilm=random bilm.random_init=all|lstm``, elmo_bench.encoders.random_init):
``all`` draws every weight by the pretraining initialiser (elmo_bench.pretrain builds ``BiLM(options)`` after
``torch.manual_seed(seed)``; here the same, under the given seed); ``lstm`` keeps the trained char-CNN token layer
and draws the LSTM layers. Its identity is the trained biLM's hash plus how and with which seed it was drawn."""
from __future__ import annotations

from typing import Any

import torch

from elmo_bench.bilm.model import BiLM
from elmo_bench.encoders.bilm.encoder import BiLMEncoder


class RandomBiLMEncoder(BiLMEncoder):
    """A biLM with random weights; identity = the trained biLM's hash plus how and with which seed it was drawn."""

    def __init__(self, bilm: BiLM, trained_hash: str, mode: str, seed: int, info: dict[str, Any]) -> None:
        super().__init__(bilm, f"{trained_hash}-random-{mode}-{seed}", info)
        self.trained_hash, self.mode, self.seed = trained_hash, mode, seed

    def identity(self) -> dict[str, Any]:
        return {"kind": "bilm", "hash": self.hash, "random_init": self.mode, "random_seed": self.seed,
                **self.erase_entry()}


def random_bilm(trained: BiLM, mode: str, seed: int) -> BiLM:
    """A fresh BiLM of ``trained``'s architecture drawn under ``seed``; ``lstm`` keeps ``trained``'s token layer.
    Frozen and in eval mode, on the CPU."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        fresh = BiLM(trained.options)
    if mode == "lstm":
        fresh.token_encoder.load_state_dict(trained.token_encoder.state_dict())
    fresh.eval()
    for parameter in fresh.parameters():
        parameter.requires_grad_(False)
    return fresh


def randomise_bilm(encoder: BiLMEncoder, mode: str, seed: int) -> RandomBiLMEncoder:
    bilm = random_bilm(encoder.bilm.cpu(), mode, seed)
    info = {**encoder.info, "random_init": mode, "random_seed": seed, "trained_hash": encoder.hash}
    out = RandomBiLMEncoder(bilm, encoder.hash, mode, seed, info)
    out.info["hash"] = out.hash
    return out
