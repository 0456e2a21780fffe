"""Read only the local Hugging Face caches for the length of one command (``elmo-bench plan`` without ``--online``):
hub reads without a network retry for minutes.

The environment variables alone are not enough once ``datasets`` or ``huggingface_hub`` is imported: both read
them at import and keep the answer in module constants (``datasets.config.HF_HUB_OFFLINE``,
``huggingface_hub.constants.HF_HUB_OFFLINE``). A command called from a Python session that imported them earlier
(a notebook, a test run) would otherwise wait on the network (25 s per dataset measured here, without internet).
So the constants of modules already imported are set too, and everything is put back afterwards; a variable the
user set (``HF_HUB_OFFLINE=0``, say) is left as it is, and so are the constants then.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
#: (module, constant) pairs that cache the offline switch at import
CONSTANTS = (("datasets.config", "HF_HUB_OFFLINE"), ("datasets.config", "HF_DATASETS_OFFLINE"),
             ("huggingface_hub.constants", "HF_HUB_OFFLINE"))


@contextmanager
def local_hub_only() -> Iterator[None]:
    """Offline hub reads inside the block (unless the user's environment says otherwise); all restored after."""
    ours = [name for name in VARIABLES if name not in os.environ]
    changed: list[tuple[object, str, object]] = []
    for name in ours:
        os.environ[name] = "1"
    if "HF_HUB_OFFLINE" in ours:
        for module_name, constant in CONSTANTS:
            module = sys.modules.get(module_name)
            if module is not None and hasattr(module, constant):
                changed.append((module, constant, getattr(module, constant)))
                setattr(module, constant, True)
    try:
        yield
    finally:
        for module, constant, value in reversed(changed):
            setattr(module, constant, value)
        for name in ours:
            os.environ.pop(name, None)
