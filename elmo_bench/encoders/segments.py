"""How long a piece of a sequence an encoder sees at once, written once: a torch-free module, so the config checks
and ``--help`` paths read it without loading a model."""
from __future__ import annotations

#: the longest piece of a sequence that goes through the encoder at once (conf/config.yaml ``max_segment`` sets
#: the same 256; tests/test_config_constants.py holds them together)
MAX_SEGMENT = 256
