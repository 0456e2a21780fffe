"""Edge probing's modes as config (issue 38 item 2): the cumulative mix sees exactly layers 0..k, aliases are one
run (identity and directory), and the every-mode sweep is expanded from the encoder's layer count."""
from __future__ import annotations

import pytest
import torch
from conftest import needs_fixtures

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.hydra_setup import run_suffix
from elmo_bench.commands.modes import expand_modes, mode_overrides
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.live_identity import identity
from elmo_bench.modules.scalar_mix import ScalarMix
from elmo_bench.records.elmo_settings import canonical_mix
from tests.engine_helpers import compose_run


def test_a_cumulative_mix_sees_exactly_layers_0_to_k():
    torch.manual_seed(0)
    mix = ScalarMix(4, mode="cumulative", layer_index=1)
    with torch.no_grad():
        mix.scalars.copy_(torch.tensor([0.3, -0.2, 5.0, 7.0]))
    layers = torch.randn(2, 4, 3, 5, requires_grad=True)
    out = mix(layers)
    weights = torch.softmax(torch.tensor([0.3, -0.2]), dim=0)
    assert torch.allclose(mix.weights(), torch.cat([weights, torch.zeros(2)]))
    assert torch.allclose(out, weights[0] * layers[:, 0] + weights[1] * layers[:, 1], atol=1e-6)
    out.sum().backward()
    assert layers.grad[:, 2:].abs().sum() == 0 and layers.grad[:, :2].abs().sum() > 0
    assert mix.scalars.grad[2:].abs().sum() == 0 and mix.scalars.grad[:2].abs().sum() > 0


def test_cumulative_zero_is_layer_zero_and_cumulative_top_is_the_learned_mix():
    assert ScalarMix(3, mode="cumulative", layer_index=0).weights().tolist() == [1.0, 0.0, 0.0]
    base = {"name": "cumulative", "mode": "cumulative", "layer": 0, "dropout": None}
    assert canonical_mix(base, 3) == {"name": "layer", "mode": "layer", "layer": 0, "dropout": None}
    assert canonical_mix({**base, "layer": 2}, 3) == {"name": "learned", "mode": "learned", "layer": None,
                                                      "dropout": None}
    assert canonical_mix({**base, "layer": 1}, 3) == {**base, "layer": 1}
    with pytest.raises(ConfigError, match=r"mix=cumulative expected mix.layer in 0..2 .*found 3"):
        canonical_mix({**base, "layer": 3}, 3)


def test_lexical_is_layer_zero_in_identity_and_directory(tmp_path):
    def ident(*overrides):
        cfg = compose_run(tmp_path, "task=edge_pos", "data=edge_pos_sample", "embedder=elmo", *overrides, tiny=False)
        return identity(run_config(cfg), None, None)

    assert ident("mix=lexical") == ident("mix=layer", "mix.layer=0")
    assert ident("mix=lexical") != ident("mix=layer", "mix.layer=1")
    assert run_suffix("embedder=elmo,mix=lexical") == run_suffix("embedder=elmo,mix.layer=0,mix=layer") \
        == run_suffix("embedder=elmo,mix.layer=0,mix=cumulative") == "/mix.layer=0,mix=layer"
    assert run_suffix("mix.layer=1,mix=cumulative") == "/mix.layer=1,mix=cumulative"


def test_the_sweep_has_every_distinct_mode_once():
    names = [name for name, _ in mode_overrides(3)]
    assert names == ["lexical", "layer 1", "layer 2", "cumulative 1", "full"]           # 2L + 1 with L = 2
    assert len(mode_overrides(13)) == 25                                                # a 12-layer transformer
    assert mode_overrides(3)[3][1] == ["mix=cumulative", "mix.layer=1"]
    with pytest.raises(ConfigError, match="mix=all_modes sets mix.layer itself"):
        expand_modes([["task=edge_ner", "mix=all_modes", "mix.layer=1"]], lambda overrides: None)
    assert expand_modes([["task=ner", "seed=2"]], lambda overrides: None) == [["task=ner", "seed=2"]]


@needs_fixtures
def test_plan_and_modes_expand_all_modes_from_the_encoder(tmp_path):
    from elmo_bench.commands.compose import expand_sweep

    jobs = expand_sweep(["task=edge_ner", "data=edge_ner_sample", "embedder=elmo", "bilm=fixture", "mix=all_modes",
                         "seed=1,2"])
    assert len(jobs) == 10                                   # two seeds x 5 modes of the fixture's layers 0..2
    assert [j[-2:] for j in jobs[:4]] == [["mix=layer", "mix.layer=0"], ["mix=layer", "mix.layer=1"],
                                          ["mix=layer", "mix.layer=2"], ["mix=cumulative", "mix.layer=1"]]
    assert jobs[4][-1] == "mix=learned" and all("seed=1" in j for j in jobs[:5])


@needs_fixtures
def test_cumulative_zero_reuses_the_layer_zero_run(tmp_path):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment

    def cfg(*overrides):
        return compose_run(tmp_path, "task=edge_pos", "data=edge_pos_sample", "embedder=elmo",
                           "task.trainer.max_epochs=1", *overrides, tiny=False)

    run_dir = tmp_path / "run"
    first = run_experiment(run_config(cfg("mix=cumulative", "mix.layer=0")), run_dir)
    assert first["elmo"]["mode"] == "layer" and first["elmo"]["layer_index"] == 0
    for alias in (("mix=layer", "mix.layer=0"), ("mix=lexical",)):
        assert run_experiment(run_config(cfg(*alias)), run_dir) == first           # the same run: nothing recomputed
    with pytest.raises(ConfigError, match="made by a different configuration"):
        run_experiment(run_config(cfg("mix=cumulative", "mix.layer=1")), run_dir)
    top = run_experiment(run_config(cfg("mix=cumulative", "mix.layer=2")), tmp_path / "top")
    assert top["elmo"]["mode"] == "learned" and top["config"]["mix"]["name"] == "learned"


@pytest.mark.parametrize("task", ["edge_pos", "edge_chunk", "edge_dep", "edge_ner", "edge_srl", "edge_coref"])
def test_budget_cpu_caps_training_sentences_and_epochs(tmp_path, task):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import trainer_config

    cfg = compose_run(tmp_path, f"task={task}", "embedder=elmo", "budget=cpu", tiny=False)
    tc = trainer_config(run_config(cfg), 1.0)
    assert cfg.data.max_train_sentences == 2000 and tc.max_epochs == 10 and tc.lr == 0.001
    full = compose_run(tmp_path, f"task={task}", "embedder=elmo", tiny=False)
    assert full.data.max_train_sentences is None and trainer_config(run_config(full), 1.0).max_epochs == 50 \
        and trainer_config(run_config(full), 1.0).lr == 0.0001


@needs_fixtures
def test_elmo_bench_modes_prints_one_job_per_line(capsys):
    from elmo_bench.commands.main import main

    assert main(["modes", "task=edge_pos", "embedder=elmo", "bilm=fixture"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"task=edge_pos embedder=elmo bilm=fixture {tail}" for tail in (
        "mix=layer mix.layer=0", "mix=layer mix.layer=1", "mix=layer mix.layer=2", "mix=cumulative mix.layer=1",
        "mix=learned")]
    assert main(["modes", "task=edge_pos", "mix=layer"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: config: elmo-bench modes chooses the mix itself; drop the mix= and mix.layer= overrides"]
