"""How long a piece of a sequence an encoder sees at once, written once: a torch-free module, so the config checks
and ``--help`` paths read it without loading a model."""
from __future__ import annotations

#: the longest piece of a sequence that goes through the encoder at once: the run config's ``max_segment``
#: default (elmo_bench.engine.run_config.Runtime, which the composed config takes from it)
MAX_SEGMENT = 256
