"""Every experiment preset composes, its sweep expands to the intended jobs, and every task x embedder composes."""
from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.tasks.registry import config_files

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
HAS_POS = "pos" in config_files("task")
register_resolvers()


def _compose(overrides: list[str], hydra_cfg: bool = False):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=overrides, return_hydra_config=hydra_cfg)


def _jobs(experiment: str, extra: list[str] = ()) -> list[list[str]]:
    """The job override lists the BasicSweeper would launch for ``python run.py -m experiment=<name> extra``."""
    cfg = _compose([f"experiment={experiment}", *extra], hydra_cfg=True)
    params = [f"{k}={v}" for k, v in cfg.hydra.sweeper.params.items()] + list(extra)
    overrides = OverridesParser.create().parse_overrides(params)
    return BasicSweeper.split_arguments(overrides, None)[0]


def _sweep_dir(experiment: str, extra: list[str] = ()) -> str:
    cfg = _compose([f"experiment={experiment}", *extra], hydra_cfg=True)
    return OmegaConf.to_container(cfg.hydra.sweep, resolve=False)["dir"]


def test_table1_sweeps_every_task_both_embedders_five_seeds():
    jobs = _jobs("table1")
    assert len(jobs) == 6 * 2 * 5
    tasks = {o.split("=")[1] for job in jobs for o in job if o.startswith("task=")}
    assert tasks == {"ner", "sst", "snli", "squad", "srl", "coref"}
    cfg = _compose(["experiment=table1", *jobs[-1]])
    assert cfg.task.name == "sst" and cfg.embedder.name == "glove_elmo" and cfg.seed == 5
    assert cfg.mix.mode == "learned" and cfg.mix.placement is None      # the task's paper settings
    assert _sweep_dir("table1") == "${paths.results_dir}/table1"


def test_table2_variants_set_embedder_mode_and_lambda():
    jobs = _jobs("table2")
    assert len(jobs) == 3 * 4 * 3
    expected = {"baseline": ("glove", False, "learned", None), "last_only": ("glove_elmo", True, "top", None),
                "lambda_1": ("glove_elmo", True, "learned", 1.0), "lambda_1e-3": ("glove_elmo", True, "learned", 0.001)}
    for variant, (name, elmo, mode, lam) in expected.items():
        cfg = _compose(["experiment=table2", "task=srl", f"variant={variant}"])
        resolved = OmegaConf.to_container(cfg, resolve=True)
        assert (resolved["embedder"]["name"], resolved["embedder"]["elmo"]) == (name, elmo)
        assert (resolved["mix"]["mode"], resolved["mix"]["lambda"]) == (mode, lam)
        assert resolved["embedder"]["glove"] is True
    assert _sweep_dir("table2") == "${paths.results_dir}/table2"


def test_table3_sweeps_placements():
    jobs = _jobs("table3")
    assert len(jobs) == 3 * 3 * 3
    assert {o for job in jobs for o in job if o.startswith("mix.placement")} == {
        "mix.placement=input", "mix.placement=both", "mix.placement=output"}
    cfg = _compose(["experiment=table3", "task=snli", "mix.placement=output"])
    assert cfg.mix.placement == "output" and cfg.embedder.elmo and cfg.mix.mode == "learned"
    assert _sweep_dir("table3") == "${paths.results_dir}/table3"


def test_sample_efficiency_sweep():
    jobs = _jobs("sample_efficiency", ["task=ner"])
    assert len(jobs) == 4 * 2 * 2
    fractions = sorted({float(o.split("=")[1]) for job in jobs for o in job if o.startswith("data.fraction=")})
    assert fractions == [0.001, 0.01, 0.1, 1.0]
    cfg = _compose(["experiment=sample_efficiency", "task=ner", "data.fraction=0.01"])
    assert cfg.trainer.scale_epochs is True and cfg.data.fraction == 0.01
    assert _sweep_dir("sample_efficiency") == "${paths.results_dir}/sample_efficiency"


def test_probe_wsd_is_the_wsd_probe_run():
    """experiment=probe_wsd is probe=wsd (Table 5) filed under results/probe_wsd; its alias is named."""
    cfg = _compose(["experiment=probe_wsd"], hydra_cfg=True)
    assert cfg.probe.name == "wsd" and cfg.probe.sets[-1] == "ALL"
    assert OmegaConf.to_container(cfg.hydra.sweep, resolve=False)["dir"] == "${paths.results_dir}/probe_wsd"
    assert "elmo-bench probe-wsd" in (CONF / "experiment" / "probe_wsd.yaml").read_text()


@pytest.mark.parametrize("row,mode,layer", [("layer_0", "layer", 0), ("layer_2", "layer", 2), ("layer_7", "layer", 7),
                                            ("learned", "learned", None)])
def test_probe_pos_one_key_picks_mode_and_layer(row, mode, layer):
    extra = [] if HAS_POS else ["task=ner"]          # tasks/pos/conf/task/pos.yaml comes with the POS probe
    cfg = _compose(["experiment=probe_pos", f"row={row}", *extra])
    mix = OmegaConf.to_container(cfg.mix, resolve=True)
    assert (mix["mode"], mix["layer"]) == (mode, layer)
    assert cfg.embedder.elmo and not cfg.embedder.glove
    if HAS_POS:
        assert cfg.task.name == "pos"


def test_probe_pos_sweep_has_no_duplicate_learned_runs():
    """row=all (the preset's sweep) is every layer of the run's encoder and the learned mix, expanded before the
    sweep starts (elmo_bench.commands.rows): the shipped biLM's 3 layers; the test biLM has 3 too."""
    from elmo_bench.commands.compose import expand_sweep

    jobs = expand_sweep(["experiment=probe_pos", *([] if HAS_POS else ["task=ner"])])
    assert len(jobs) == 4 * 3
    assert sum("row=learned" in job for job in jobs) == 3        # one per seed
    assert {o for job in jobs for o in job if o.startswith("row=")} == {"row=layer_0", "row=layer_1", "row=layer_2",
                                                                          "row=learned"}


TASKS = ["ner", "sst", "snli", "squad", "srl", "coref", "pos"]


@pytest.mark.parametrize("embedder", ["glove", "elmo", "glove_elmo"])
@pytest.mark.parametrize("task", TASKS)
def test_every_task_and_embedder_composes(task, embedder):
    if task not in config_files("task"):
        pytest.skip(f"tasks/{task}/conf/task/{task}.yaml not present yet")
    cfg = _compose([f"task={task}", f"embedder={embedder}"])
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert resolved["task"]["name"] == task and resolved["embedder"]["name"] == embedder
    assert resolved["data"] and "target" not in resolved["task"]  # the registry (tasks.TASKS) is the only one


@pytest.mark.parametrize("task", TASKS)
def test_budget_cpu_sets_each_tasks_preset_and_the_command_line_still_wins(task):
    preset = OmegaConf.load(config_files("budget_preset")[f"cpu_{task}"])
    cfg = OmegaConf.to_container(_compose([f"task={task}", "budget=cpu"]), resolve=True)
    for key, value in (preset.get("trainer") or {}).items():
        assert cfg["trainer"][key] == value
    for key, value in (preset.get("data") or {}).items():
        assert cfg["data"][key] == value
    plain = OmegaConf.to_container(_compose([f"task={task}"]), resolve=True)
    assert plain["trainer"]["max_epochs"] is None and plain["data"]["fraction"] == 1.0  # no budget: the task's own
    overridden = OmegaConf.to_container(_compose([f"task={task}", "budget=cpu", "data.fraction=0.01",
                                                  "trainer.max_epochs=3"]), resolve=True)
    assert overridden["data"]["fraction"] == 0.01 and overridden["trainer"]["max_epochs"] == 3
