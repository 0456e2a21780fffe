"""Both shipped biLMs load: `bilm=shipped` (the current default) and `bilm=shipped_v1` (the first one, kept for
comparison); the v1 files are exactly the ones every v1 result was made with (their content hash)."""
from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from elmo_bench.bilm.weights import bilm_identity, load_bilm
from elmo_bench.commands.hydra_setup import register_resolvers

REPO = Path(__file__).resolve().parents[1]


def _bilm_paths(name: str) -> tuple[str, str]:
    register_resolvers()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        cfg = compose(config_name="config", overrides=[f"bilm={name}"])
    bilm = OmegaConf.to_container(cfg.bilm, resolve=True)
    return bilm["options"], bilm["weights"]


def test_shipped_v1_is_the_first_model_unchanged():
    options, weights = _bilm_paths("shipped_v1")
    assert bilm_identity(options, weights) == "a300251a45b83d5b"
    bilm = load_bilm(options, weights)
    assert bilm.num_layers == 3 and bilm.output_dim == 256


def test_shipped_default_loads_and_differs_from_v1_only_by_design():
    options, weights = _bilm_paths("shipped")
    bilm = load_bilm(options, weights)
    assert bilm.num_layers >= 2
    assert Path(weights).stat().st_size <= 25_000_000  # the size budget of the shipped model


def test_shipped_default_reproduces_the_training_graphs_activations():
    """activation_check.json (written by scripts/finish_shipped_bilm.py from the training checkpoint, through the
    training graph: window LSTM, reversed backward stream) = what the exported files compute on the inference path."""
    import json

    import numpy as np
    import pytest
    import torch

    from elmo_bench.bilm.chars import batch_to_ids

    options, weights = _bilm_paths("shipped")
    check = Path(weights).parent / "activation_check.json"
    if not check.exists():
        pytest.skip("the shipped model has no activation_check.json (it predates the check)")
    bilm = load_bilm(options, weights).eval()
    for row in json.loads(check.read_text())["sentences"]:
        with torch.no_grad():
            top = bilm(batch_to_ids([row["tokens"]]), keep_boundaries=True).layers[0, -1].numpy()
        assert np.abs(top - np.asarray(row["top_layer"], dtype=np.float32)).max() < 1e-5
