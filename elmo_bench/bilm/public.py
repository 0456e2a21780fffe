"""The public ELMo biLM's architecture (elmo_2x4096_512_2048cnn_2xhighway_options.json, the paper's model) and a
writer for a random biLM of that size in the bilm-tf layout.

Why: the paper's weights are a download this repository does not ship, but its costs (cache FLOPs and bytes, head
input width) and its memory and speed on a GPU depend only on the architecture. ``elmo-bench plan`` falls back to
these options when ``bilm.options`` is not readable; the paper-size smoke tests and ``scripts/gpu_check.sh`` train
and time against a random biLM of this size written by :func:`write_random_bilm`.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import torch

from elmo_bench.bilm.model import BiLM
from elmo_bench.bilm.options import BiLMOptions

#: the architecture keys of the published options.json (training keys such as n_epochs left out)
PUBLIC_OPTIONS: dict[str, Any] = {
    "lstm": {"use_skip_connections": True, "projection_dim": 512, "cell_clip": 3, "proj_clip": 3, "dim": 4096,
             "n_layers": 2},
    "char_cnn": {"activation": "relu", "n_highway": 2, "embedding": {"dim": 16}, "n_characters": 262,
                 "max_characters_per_token": 50,
                 "filters": [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]]},
}


def public_options() -> dict[str, Any]:
    """A fresh copy of :data:`PUBLIC_OPTIONS` (callers may edit it)."""
    return copy.deepcopy(PUBLIC_OPTIONS)


def write_random_bilm(directory: str | Path, options: dict[str, Any] | None = None,
                      seed: int = 0) -> tuple[Path, Path]:
    """``directory/options.json`` and ``directory/weights.hdf5`` of a biLM with PyTorch's default random init
    (seeded), written by elmo_bench.bilm.weights.save_bilm; at the public size the weights file is about 375 MiB."""
    from elmo_bench.bilm.weights import save_bilm  # lazy: h5py

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    model = BiLM(BiLMOptions.from_dict(options or public_options(), "random biLM options"))
    paths = directory / "options.json", directory / "weights.hdf5"
    save_bilm(model, *paths)
    return paths
