"""Issue 45, config, tasks and files: what a hostile new user's config, task plug-ins and full disks get now: one
``error:`` line and exit 2 (or a warning naming the broken plug-in), never a silently wrong run or a traceback.
Each test below failed before its fix; real tiny files are written in tmp_path."""
from __future__ import annotations

import pytest
from conftest import needs_fixtures

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.main import main
from tests.engine_helpers import compose_run


def _one_line(capsys) -> str:
    """The one ``error:`` line a refused command printed (and nothing on stdout)."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err[-2000:]
    assert captured.out == ""
    return lines[0]


# 1. mix.layer with a mode that takes no layer: refused at the door, not a learned mix trained as one layer
@pytest.mark.parametrize("mix", ["learned", "average", "top"])
def test_a_layer_given_to_a_mix_that_takes_none_is_refused_at_the_door(capsys, mix):
    assert main(["config", "task=edge_pos", "embedder=elmo", f"mix={mix}", "mix.layer=1"]) == 2
    assert _one_line(capsys) == (f"error: config: mix.layer=1 is used by mix=layer and mix=cumulative only, not by "
                                 f"mix={mix} (mode {mix}): drop mix.layer, or choose mix=layer")


def test_the_shipped_presets_that_leave_the_layer_null_still_pass(capsys):
    assert main(["config", "--format", "json", "experiment=probe_pos", "probe=learned"]) == 0
    assert main(["config", "--format", "json", "task=edge_pos", "embedder=elmo", "mix=learned"]) == 0
    assert main(["config", "--format", "json", "task=edge_pos", "embedder=elmo", "mix=layer", "mix.layer=2"]) == 0
    capsys.readouterr()


# 2. a negative layer at the door; one past the encoder's top where its layers are known
def test_a_negative_layer_is_refused_at_the_door(capsys):
    assert main(["config", "task=edge_pos", "embedder=elmo", "mix=layer", "mix.layer=-1"]) == 2
    assert _one_line(capsys) == "error: config: mix.layer expected an integer >= 0, found -1"


def test_a_layer_past_the_shipped_bilms_top_is_refused_by_elmo_bench_config(capsys):
    assert main(["config", "task=edge_pos", "embedder=elmo", "mix=layer", "mix.layer=3"]) == 2
    assert _one_line(capsys) == ("error: config: mix=layer expected mix.layer in 0..2 (the encoder has 3 layers), "
                                 "found 3")


def test_a_layer_past_the_encoders_top_is_refused_by_plan(capsys):
    assert main(["plan", "task=edge_pos", "data=edge_pos_sample", "embedder=elmo", "bilm=fixture", "mix=layer",
                 "mix.layer=3", "--device", "cpu", "--sample-batches", "1"]) == 2
    assert _one_line(capsys) == ("error: config: mix=layer expected mix.layer in 0..2 (the encoder has 3 layers), "
                                 "found 3")


@needs_fixtures
def test_a_layer_past_the_encoders_top_is_refused_by_a_run_before_it_trains(tmp_path):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment

    cfg = compose_run(tmp_path, "task=edge_pos", "data=edge_pos_sample", "embedder=elmo", "mix=layer",
                      "mix.layer=3", tiny=False)
    with pytest.raises(ConfigError, match=r"^config: mix=layer expected mix.layer in 0..2 \(the encoder has 3 "
                                          r"layers\), found 3$"):
        run_experiment(run_config(cfg), tmp_path / "run")
    assert not (tmp_path / "run" / "results.json").exists()


# 3. a plateau schedule's minimum rate above the starting rate: zero epochs trained, the untrained head reported
def test_a_minimum_rate_above_the_learning_rate_is_refused_at_the_door(capsys):
    assert main(["config", "task=edge_pos", "embedder=elmo", "trainer.lr_plateau_min_lr=0.01"]) == 2
    assert _one_line(capsys) == ("error: config: trainer.lr_plateau_min_lr=0.01 is above trainer.lr=0.0001: training "
                                 "would stop before its first epoch (lower trainer.lr_plateau_min_lr or raise "
                                 "trainer.lr)")
    assert main(["config", "--format", "json", "task=edge_pos", "embedder=elmo", "trainer.lr=0.01",
                 "trainer.lr_plateau_min_lr=0.01"]) == 0  # equal: the first epoch trains
    capsys.readouterr()
