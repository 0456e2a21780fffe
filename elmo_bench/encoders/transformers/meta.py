"""A model built from its config alone on torch's meta device: shapes, no memory, no weights read. The one place the
meta device is used (tests/test_device.py): plan's parameter counts and per-device placement, and the check of
``encoder.max_memory`` against the weights before any weight is read. Torch-free at import."""
from __future__ import annotations

from typing import Any


def meta_model(architecture: Any, **keywords: Any) -> Any:
    """The model ``architecture`` (a transformers config) describes, on the meta device (the encoder of an
    encoder-decoder); ``keywords`` go to ``AutoModel.from_config`` (a dtype)."""
    import torch  # lazy: torch
    from transformers import AutoModel  # lazy: transformers

    with torch.device("meta"):
        model = AutoModel.from_config(architecture, **keywords)
    return model.get_encoder() if getattr(model.config, "is_encoder_decoder", False) else model
