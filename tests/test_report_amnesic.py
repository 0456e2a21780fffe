"""Issue 47 item 4 in the report: the amnesic table, from hand-made ``probe=amnesic_lm`` records (the probe's schema:
``metrics.dev.layer_<k>_ppl_none`` ...) and edge_dep runs with ``encoder.erase`` set, each paired with the run
of the same experiment but for ``encoder.erase``; numbers checked by hand, the paper's direction beside them, erased
task runs kept out of the edge table, and a report without such records unchanged."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elmo_bench.commands.report import build_report
from elmo_bench.records.run_record import RunRecord
from tests.report_sections import probe_report
from tests.test_report_structural_mdl import ENCODERS

NO_LM, NO_TASK_RUNS = probe_report("amnesic_lm").NO_LM, probe_report("amnesic_lm").NO_TASK_RUNS

#: layer → (ppl none, erased, random; KL erased, random; top-1 none, erased, random; p): layer 0 as the paper's
#: direction (p < 0.05), layer 1 against it (erased below random), layer 2 undecided (p 0.4, erased above random)
LM = {0: (100.0, 150.0, 105.0, 0.5, 0.05, 30.0, 20.0, 29.0, 0.001),
      1: (100.0, 101.0, 103.0, 0.02, 0.03, 30.0, 29.5, 29.0, 0.9),
      2: (100.0, 101.0, 100.5, 0.02, 0.01, 30.0, 29.8, 29.9, 0.4)}
KEYS = ("ppl_none", "ppl_erased", "ppl_random", "kl_erased", "kl_random", "top1_none", "top1_erased", "top1_random",
        "p")


def amnesic_record(path: Path, name: str = "bilm", control: str = "random", lm: dict = LM) -> None:
    encoder, bilm, random, _, _ = ENCODERS[name]
    dev = {f"layer_{k}_{key}": v for k, values in lm.items() for key, v in zip(KEYS, values)}
    path.mkdir(parents=True)
    RunRecord(task="amnesic_lm_probe", embedder="elmo", seed=0,
              config={"probe": {"tags": "upos", "erasers": "runs/erasure", "seeds": 3, "control": control}, **random},
              metrics={"dev": dev}, data={"name": "ud_ewt", "fraction": 1.0, "dev_sentences": 1000, "tags": "upos"},
              main_metric="layer_0_ppl_erased", mixes={}, elmo=None, epochs={"run": 0, "best": None, "history": []},
              bilm=bilm, encoder=encoder).write(path / "results.json")


def task_record(path: Path, seed: int, f1: float, erase: dict[str, Any] | None, name: str = "bilm") -> None:
    """An edge_dep run of one config (its seed), with ``encoder.erase`` when given."""
    encoder, bilm, _, _, _ = ENCODERS[name]
    config = {"task": {"name": "edge_dep"}, "seed": seed, "paths": {"results_dir": str(path)},
              "encoder": {"kind": encoder["kind"], **({"erase": {"path": "runs/erasure", **erase}} if erase else {})}}
    path.mkdir(parents=True)
    RunRecord(task="edge_dep", embedder="elmo", seed=seed, config=config,
              metrics={"dev": {"f1": f1 + 1}, "test": {"f1": f1}}, data={"name": "edge_dep", "fraction": 1.0},
              main_metric="f1", mixes={}, elmo={"mode": "learned", "placement": "input", "layer_index": None},
              epochs={"run": 2, "best": 2, "history": []}, bilm=bilm, encoder=encoder).write(path / "results.json")


def erased_runs(root: Path) -> None:
    """Seed 1: un-erased 80, erased 74.5, random seeds 0 and 1 79 and 78; seed 2: un-erased 82, erased 78 (no random);
    seed 3: erased 70 with no un-erased partner (left out)."""
    upos1 = {"concept": "upos", "layer": 1}
    task_record(root / "none1", 1, 80.0, None)
    task_record(root / "erased1", 1, 74.5, {**upos1, "control": "none", "seed": 0})
    task_record(root / "random1_0", 1, 79.0, {**upos1, "control": "random", "seed": 0})
    task_record(root / "random1_1", 1, 78.0, {**upos1, "control": "random", "seed": 1})
    task_record(root / "none2", 2, 82.0, None)
    task_record(root / "erased2", 2, 78.0, {**upos1, "control": "none", "seed": 0})
    task_record(root / "erased3", 3, 70.0, {**upos1, "control": "none", "seed": 0})


def built(root: Path, out: Path) -> dict[str, Any]:
    return json.loads(build_report([str(root)], out, "json", significance=False).read_text())


def test_the_lm_columns_are_the_records_numbers_with_the_deltas_and_the_papers_direction(tmp_path):
    amnesic_record(tmp_path / "runs" / "amnesic")
    table = built(tmp_path / "runs", tmp_path / "out")["tables"]["amnesic"]
    rows = {r["layer"]: r for r in table["rows"]}
    assert sorted(rows) == [0, 1, 2] and {r["encoder"] for r in rows.values()} == {"ELMo (biLM abcdef01)"}
    assert rows[0]["delta_ppl_erased"] == pytest.approx(50.0) and rows[0]["delta_ppl_random"] == pytest.approx(5.0)
    assert rows[0]["dev"]["kl_erased"]["mean"] == 0.5 and rows[0]["dev"]["top1_erased"]["mean"] == 20.0
    assert rows[1]["delta_ppl_erased"] == pytest.approx(1.0) and rows[1]["delta_ppl_random"] == pytest.approx(3.0)
    assert [rows[k]["holds"] for k in (0, 1, 2)] == [True, False, None]
    assert all(r["delta_task"] == {} for r in rows.values())          # no erased task runs: the reason is noted
    assert NO_TASK_RUNS in " ".join(table["notes"]) and "Elazar" in table["paper"]["source"]
    assert "paper: Elazar, Ravfogel, Jacovi & Goldberg 2021" in " ".join(table["notes"])
    md = build_report([str(tmp_path / "runs")], tmp_path / "md", "md", significance=False).read_text()
    line = next(x for x in md.splitlines() if "| layer_0 |" in x)
    assert "| 100.00 | 50.00 | 5.00 | 0.5000 | 0.0500 | 30.00 | 20.00 | 29.00 | 0.001 | — | — | yes |" in line


def test_erased_task_runs_are_paired_with_their_unerased_config_and_kept_out_of_the_edge_table(tmp_path):
    root = tmp_path / "runs"
    amnesic_record(root / "amnesic")
    erased_runs(root / "edge")
    found = built(root, tmp_path / "out")
    rows = {r["layer"]: r for r in found["tables"]["amnesic"]["rows"]}
    deltas = rows[1]["delta_task"]["edge_dep"]
    assert deltas["metric"] == "f1"
    # seed 1: 74.5 − 80 = −5.5, seed 2: 78 − 82 = −4 → mean −4.75 over 2 seeds; random: mean(79, 78) − 80 = −1.5
    assert deltas["erased"]["mean"] == pytest.approx(-4.75) and deltas["erased"]["n"] == 2
    assert deltas["random"] == {"mean": pytest.approx(-1.5), "std": None, "n": 1}
    assert rows[0]["delta_task"] == {}                                # layer 0 was not erased in a task run
    md = build_report([str(root)], tmp_path / "md", "md", significance=False).read_text()
    assert "edge_dep f1 -4.75" in md and "edge_dep f1 -1.50" in md
    (edge,) = found["tables"]["edge_probing"]["rows"]                # erased runs: not seeds of the biLM's edge_dep
    assert edge["full"]["mean"] == pytest.approx(81.0) and edge["full"]["n"] == 2


def test_task_pairs_without_an_lm_record_are_a_row_of_their_own_with_the_reason(tmp_path):
    erased_runs(tmp_path / "runs")
    table = built(tmp_path / "runs", tmp_path / "out")["tables"]["amnesic"]
    (row,) = table["rows"]
    assert (row["layer"], row["concept"], row["dev"]["ppl_none"]["mean"], row["holds"]) == (1, "upos", None, None)
    assert NO_LM in " ".join(table["notes"]) and NO_TASK_RUNS not in " ".join(table["notes"])


def test_without_amnesic_records_there_is_no_amnesic_section(tmp_path):
    task_record(tmp_path / "runs" / "none1", 1, 80.0, None)
    found = built(tmp_path / "runs", tmp_path / "out")
    assert "amnesic" not in found["tables"] and "Amnesic" not in found["summary"]


def test_older_records_whose_encoder_config_is_a_group_name_or_absent_are_read(tmp_path):
    """The committed records: 19 say ``config.encoder: "bilm"``, 105 have none. The pairing reads them (it used to
    stop the whole report with a ValueError) and they are nobody's un-erased partner but their own config's."""
    root = tmp_path / "runs"
    amnesic_record(root / "amnesic")
    erased_runs(root / "edge")
    for seed, name, encoder in ((7, "group", "bilm"), (8, "absent", None)):     # seeds: experiments of their own
        path = root / "old" / name / "results.json"
        record = json.loads((root / "edge" / "none1" / "results.json").read_text())
        config = {**record["config"], "seed": seed, "encoder": encoder}
        record["seed"], record["config"] = seed, config if encoder else {k: v for k, v in config.items() if k != "encoder"}
        record["metrics"]["test"]["f1"] = 10.0
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(record))
    rows = {r["layer"]: r for r in built(root, tmp_path / "out")["tables"]["amnesic"]["rows"]}
    assert rows[1]["delta_task"]["edge_dep"]["erased"]["mean"] == pytest.approx(-4.75)   # paired as before


def test_the_random_and_orth_controls_are_rows_of_their_own_never_averaged(tmp_path):
    """Two records of layer 1, one per control kind (they remove different directions): two rows, each its own
    numbers; an orth-controlled task run pairs into the orth row."""
    root = tmp_path / "runs"
    amnesic_record(root / "random", lm={1: LM[0]})
    amnesic_record(root / "orth", control="orth", lm={1: (100.0, 150.0, 110.0, 0.5, 0.09, 30.0, 20.0, 28.0, 0.002)})
    erased_runs(root / "edge")
    task_record(root / "edge" / "orth1", 1, 76.0, {"concept": "upos", "layer": 1, "control": "orth", "seed": 0})
    table = built(root, tmp_path / "out")["tables"]["amnesic"]
    rows = {r["control"]: r for r in table["rows"]}
    assert sorted(rows) == ["orth", "random"] and {r["layer"] for r in rows.values()} == {1}
    assert rows["random"]["delta_ppl_random"] == pytest.approx(5.0) and rows["orth"]["delta_ppl_random"] == \
        pytest.approx(10.0)
    assert rows["random"]["dev"]["kl_random"]["n"] == 1 and rows["orth"]["dev"]["kl_random"]["mean"] == 0.09
    # orth: seed 1 76 − 80 = −4, beside that seed's erased 74.5 − 80 = −5.5 (the seeds where the orth control ran);
    # random: as before, −1.5 beside −4.75 (seed 2's erased run, which has no control, stays in the random row)
    assert rows["orth"]["delta_task"]["edge_dep"]["random"]["mean"] == pytest.approx(-4.0)
    assert rows["orth"]["delta_task"]["edge_dep"]["erased"] == {"mean": pytest.approx(-5.5), "std": None, "n": 1}
    assert rows["random"]["delta_task"]["edge_dep"]["random"]["mean"] == pytest.approx(-1.5)
    assert rows["random"]["delta_task"]["edge_dep"]["erased"]["mean"] == pytest.approx(-4.75)


def test_a_transformers_erased_runs_pair_with_an_older_records_run_of_the_same_experiment(tmp_path):
    """The MiniLM case: the un-erased run was recorded by an earlier version (fewer config keys, another results
    directory), the erased runs' encoder identity names their eraser; they pair because the report's experiment key
    (Run.signature) is the same but for encoder.erase, and never with another mix or seed."""
    root = tmp_path / "runs"
    upos3 = {"concept": "upos", "layer": 3}

    def minilm_run(name: str, seed: int, f1: float, erase: dict[str, Any] | None, mix_layer: int = 6,
                   old: bool = False) -> None:
        task_record(root / name, seed, f1, erase, name="minilm")
        path = root / name / "results.json"
        record = json.loads(path.read_text())
        record["elmo"] = {"mode": "layer", "placement": "input", "layer_index": mix_layer}
        if erase:   # the encoder's identity names the eraser it ran with
            record["encoder"] = {**record["encoder"], "erase": {**upos3, "eraser": "562a5f34c6b349e1",
                                                               "control": erase["control"]}}
        if not old:  # a newer version's config keys, none of them part of the experiment
            record["config"] = {**record["config"], "shard_sentences": 0, "data": {"max_overlap": 0.25}}
        path.write_text(json.dumps(record))

    minilm_run("committed_none", 1, 65.87, None, old=True)
    minilm_run("erased", 1, 48.87, {**upos3, "control": "none", "seed": 0})
    minilm_run("random1", 1, 65.0, {**upos3, "control": "random", "seed": 1})
    minilm_run("random2", 1, 64.0, {**upos3, "control": "random", "seed": 2})
    minilm_run("other_mix_none", 1, 10.0, None, mix_layer=3, old=True)      # another experiment: never the partner
    minilm_run("other_seed_erased", 2, 1.0, {**upos3, "control": "none", "seed": 0})   # no partner: left out
    (row,) = built(root, tmp_path / "out")["tables"]["amnesic"]["rows"]
    deltas = row["delta_task"]["edge_dep"]
    assert deltas["erased"] == {"mean": pytest.approx(48.87 - 65.87), "std": None, "n": 1}
    assert deltas["random"]["mean"] == pytest.approx(64.5 - 65.87) and deltas["random"]["n"] == 1
    assert (row["layer"], row["concept"], row["dev"]["ppl_none"]["mean"]) == (3, "upos", None)
