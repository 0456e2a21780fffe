"""The random-weights twin of a transformers encoder (``encoder.random_init=all``, elmo_bench.encoders.random_init):
the model built from its config (``AutoModel.from_config``) under the seed, tokenizer and windows kept; a trained
model spread over devices (``encoder.device_map``) has its twin spread the same way (built whole on the cpu first)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from elmo_bench.encoders.transformers.dispatch import dispatch_like, is_dispatched
from elmo_bench.encoders.transformers.loading import TORCH_DTYPES, dtype_keyword, frozen


def randomise_transformer(encoder: Any, mode: str, seed: int) -> Any:
    """The transformers encoder with its model rebuilt from its config under ``seed`` (tokenizer and windows kept)."""
    from transformers import AutoModel  # lazy: transformers

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        dtype = getattr(encoder, "dtype", "float32")  # built in the dtype the trained one runs in
        model = AutoModel.from_config(encoder.model.config, **({} if dtype == "float32" else {
            dtype_keyword(): TORCH_DTYPES[dtype]}))
    if getattr(model.config, "is_encoder_decoder", False):
        model = model.get_encoder()
    if is_dispatched(encoder.model):  # spread as the trained one is; its disk-offloaded weights kept apart
        folder = getattr(encoder, "place", None) and encoder.place["offload_folder"]
        model = dispatch_like(model, encoder.model, str(Path(folder) / f"random-{mode}-{seed}") if folder else None)
    encoder.model = frozen(model, dtype)
    encoder.randomised = {"random_init": mode, "random_seed": seed}
    return encoder


