"""Random-encoder baselines (Zhang & Bowman 2018; Liu et al. 2019; Hewitt & Manning's Proj0): the same architecture
with weights drawn at random, so a probe can tell what training added from what the architecture gives for free.

- biLM ``all``: every weight drawn by the pretraining initialiser (elmo_bench.pretrain builds ``BiLM(options)`` after
  ``torch.manual_seed(seed)``; here the same, under the given seed);
- biLM ``lstm``: the trained char-CNN token layer kept, the LSTM layers drawn at random;
- transformers ``all``: the model built from its config (``AutoModel.from_config``) under the seed.

hdf5, manylangs and python encoders cannot be randomised here (no architecture of ours to draw): a ConfigError.
A random encoder's identity adds ``random_init`` and ``random_seed`` and its cache id differs from the trained
one's, so activation caches, records and run directories never mix them.
"""
from __future__ import annotations

from typing import Any

import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.bilm.model import BiLM
from elmo_bench.encoders.bilm import BiLMEncoder
from elmo_bench.encoders.settings import BILM_RANDOM_INIT
from elmo_bench.encoders.transformers import TORCH_DTYPES, dtype_keyword, frozen

MODES = BILM_RANDOM_INIT
RANDOMISABLE = {"bilm": MODES, "transformers": ("all",)}


def check_random_init(kind: str, mode: str | None, flag: str = "--random-init") -> None:
    """ConfigError (one line) when ``mode`` is set and the encoder kind cannot be randomised that way."""
    if mode is None:
        return
    if mode not in MODES:
        raise ConfigError(f"{flag} expected one of {', '.join(MODES)}, found {mode!r}")
    allowed = RANDOMISABLE.get(kind, ())
    if mode not in allowed:
        can = "; ".join(f"{k}: {'|'.join(m)}" for k, m in RANDOMISABLE.items())
        raise ConfigError(f"{flag} {mode}: encoder {kind} cannot be randomised that way (randomisable: {can})")


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
    check_random_init("bilm", mode)
    bilm = random_bilm(encoder.bilm.cpu(), mode, seed)
    info = {**encoder.info, "random_init": mode, "random_seed": seed, "trained_hash": encoder.hash}
    out = RandomBiLMEncoder(bilm, encoder.hash, mode, seed, info)
    out.info["hash"] = out.hash
    return out


def randomise_transformer(encoder: Any, mode: str, seed: int) -> Any:
    """The transformers encoder with its model rebuilt from its config under ``seed`` (tokenizer and windows kept)."""
    from transformers import AutoModel  # lazy: transformers

    check_random_init("transformers", mode)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        dtype = getattr(encoder, "dtype", "float32")  # built in the dtype the trained one runs in
        model = AutoModel.from_config(encoder.model.config, **({} if dtype == "float32" else {
            dtype_keyword(): TORCH_DTYPES[dtype]}))
    if getattr(model.config, "is_encoder_decoder", False):
        model = model.get_encoder()
    encoder.model = frozen(model, dtype)
    encoder.randomised = {"random_init": mode, "random_seed": seed}
    return encoder


def randomise(encoder: Any, mode: str | None, seed: int) -> Any:
    """``encoder`` itself when ``mode`` is None, else its random counterpart (ConfigError when it has none)."""
    if mode is None:
        return encoder
    kind = str(encoder.identity().get("kind", type(encoder).__name__))
    check_random_init(kind, mode)
    if kind == "bilm":
        return randomise_bilm(encoder, mode, seed)
    return randomise_transformer(encoder, mode, seed)
