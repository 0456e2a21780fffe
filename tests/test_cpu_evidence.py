"""scripts/cpu_evidence.py: each plan expands to the runs the README's numbers need, cheap points first, and every
run's overrides compose into the intended config."""
from __future__ import annotations

import importlib.util
import sys

from omegaconf import OmegaConf

from tests.conftest import REPO
from tests.test_presets import _compose

spec = importlib.util.spec_from_file_location("cpu_evidence", REPO / "scripts" / "cpu_evidence.py")
cpu_evidence = importlib.util.module_from_spec(spec)
sys.modules["cpu_evidence"] = cpu_evidence
spec.loader.exec_module(cpu_evidence)


def test_table1_plan_is_every_task_embedder_and_seed_once():
    runs = cpu_evidence.plan("table1", cpu_evidence.TASKS, ["glove", "glove_elmo"], [1, 2, 3])
    assert len(runs) == len({tuple(r) for r in runs}) == 6 * 2 * 3
    assert runs[0] == ["task=ner", "embedder=glove", "seed=1"] and runs[12][2] == "seed=2"  # seed 1 first


def test_figure1_plan_runs_every_seed_of_a_small_fraction_before_the_full_data():
    runs = cpu_evidence.plan("figure1", ["ner", "srl"], ["glove"], [1, 2, 3])
    fractions = [next((o for o in r if o.startswith("data.fraction=")), "budget") for r in runs]
    assert fractions == ["data.fraction=0.01"] * 6 + ["budget"] * 6 + ["data.fraction=1.0"] * 6
    assert len(runs) == len({tuple(r) for r in runs})


def test_layer_norm_plan_runs_the_value_opposite_to_each_tasks_default_and_every_run_composes():
    runs = cpu_evidence.plan("layer_norm", ["ner"], ["glove", "glove_elmo"], [1])
    default = cpu_evidence.task_layer_norm("ner")
    assert [r[-1] for r in runs] == [f"mix.layer_norm={str(not default).lower()}"]   # the other arm: Table 1's run
    assert _compose(["task=ner", "budget=cpu"]).task.elmo.layer_norm is default
    for overrides in runs + cpu_evidence.plan("figure1", ["ner"], ["glove_elmo"], [1]):
        cfg = OmegaConf.to_container(_compose([*overrides, "budget=cpu"]), resolve=True)
        assert cfg["task"]["name"] == "ner" and cfg["embedder"]["name"] == "glove_elmo"
        assert cfg["data"]["fraction"] in (0.01, 0.1, 1.0)


def test_table2_and_table3_plans_compose_to_the_papers_variants():
    seen = []
    for name in ("table2", "table3"):
        for overrides in cpu_evidence.plan(name, ["snli"], ["glove"], [1]):
            elmo = OmegaConf.to_container(_compose([*overrides, "budget=cpu"]), resolve=True)["mix"]
            seen.append((elmo["mode"], elmo["lambda"], elmo["placement"]))
    # SNLI's own settings (conf/task/snli.yaml: lambda 0.001, ELMo at input and output) are Table 1's +ELMo run
    assert seen == [("top", None, None), ("learned", 1.0, None),
                    ("learned", None, "input"), ("learned", None, "output")]


def test_variants_skip_only_the_tasks_own_setting():
    srl = [o[-1] for name in ("table2", "table3") for o in cpu_evidence.plan(name, ["srl"], ["glove"], [1])]
    assert srl == ["mix=top", "mix.lambda=1.0", "mix.lambda=0.001", "mix.placement=both", "mix.placement=output"]
    assert cpu_evidence.is_task_default("snli", ["mix.lambda=1e-3"])
    assert not cpu_evidence.is_task_default("snli", ["mix.lambda=0.01"])
    assert not cpu_evidence.is_task_default("snli", ["mix=top"])


def test_fractions_filter_keeps_only_the_asked_points(capsys):
    assert cpu_evidence.main(["figure1", "--tasks", "ner", "--embedders", "glove", "--seeds", "1,2",
                              "--fractions", "0.01", "--dry-run"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and all("data.fraction=0.01" in line for line in lines)
    assert cpu_evidence.run_fraction(["task=ner"]) == 0.1                 # the budget preset's own fraction
    assert cpu_evidence.run_fraction(["task=squad"]) == 0.5 and cpu_evidence.run_fraction(["task=snli"]) == 1.0


def test_ablation_plan_skips_the_tasks_own_setting_and_every_run_composes():
    runs = cpu_evidence.plan("ablation", ["ner"], ["glove"], [1, 2])
    # NER's own initial gamma (conf/task/ner.yaml: 0.25, chosen by this ablation) is Table 1's +ELMo run
    assert [r[-1] for r in runs[:4]] == ["mix.gamma_init=1.0", "mix.dropout=0.25", "mix.placement=both",
                                         "mix.lambda=0.001"]
    assert len(runs) == 8 and all(r[1] == "embedder=glove_elmo" for r in runs) and runs[4][2] == "seed=2"
    mixes = [OmegaConf.to_container(_compose([*r, "budget=cpu"]), resolve=True)["mix"] for r in runs[:4]]
    assert (mixes[0]["gamma_init"], mixes[1]["dropout"], mixes[2]["placement"], mixes[3]["lambda"]) == \
        (1.0, 0.25, "both", 0.001)
