"""Issue 45, the report's part ("nothing silently wrong"): probe records of different training sizes or epoch caps
are never averaged as seeds, disagreeing duplicates are refused, every run read is shown or counted as skipped with
its reason, an empty denominator is null with a count, and the tables and figures say what they show."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from elmo_bench.commands.report import build_report
from elmo_bench.probe.structural import metrics as sm
from elmo_bench.records.run_record import RunRecord
from tests.report_sections import probe_report

structural_mdl_table = probe_report("structural").structural_mdl_table
from tests.report_sections import collect_with_probes as collect

BILM = "abcdef0123456789"
ENCODER = {"kind": "bilm", "hash": BILM, "layers": 3, "dim": 256}
SHIPPED = {"name": "shipped", "hash": BILM, "layers": 3, "dim": 256}


def probe_record(path: Path, task: str, values: dict[str, float], *, sentences: int = 2000, epochs: int = 10,
                 extra: dict[str, Any] | None = None) -> None:
    """A structural-probe or MDL results.json of the biLM: ``values`` are layer 0..2's test (structural) or train
    (MDL) metrics, the same for every layer."""
    split = "test" if task == "structural_probe" else "train"
    metrics = {split: {f"layer_{k}_{m}": v for k in range(3) for m, v in values.items()}}
    config = {"max_epochs": epochs, "probe": "linear", "random_init": None, "random_seed": 0}
    path.mkdir(parents=True, exist_ok=True)
    RunRecord(task=task, embedder="elmo", seed=0, config=config, metrics=metrics,
              data={"name": "ud_ewt", "fraction": 1.0, "train_sentences": sentences, "punct": "xpos"},
              main_metric=f"layer_1_{next(iter(values))}", mixes={}, elmo=None,
              epochs={"run": 0, "best": None, "history": []}, bilm=SHIPPED, encoder=ENCODER,
              extra=extra or {}).write(path / "results.json")


def _rows(table) -> list[list[str]]:
    return [row for row in table.rows if row[0].startswith("ELMo")]


# item 1: training sizes and epoch caps are never seeds --------------------------------------------------------------

def test_structural_records_of_two_training_sizes_are_two_labelled_rows_not_one_mean(tmp_path):
    probe_record(tmp_path / "small", "structural_probe", {"uuas": 13.35}, sentences=200)
    probe_record(tmp_path / "large", "structural_probe", {"uuas": 14.51}, sentences=1200)
    table = structural_mdl_table(collect([tmp_path]).runs)
    layer1 = [row for row in _rows(table) if row[2] == "layer_1"]
    assert [(row[1], row[3]) for row in layer1] == [("trained, 200 train sentences", "13.35"),
                                                    ("trained, 1200 train sentences", "14.51")]
    assert not any("±" in cell for row in table.rows for cell in row)          # old: "13.93 ± 0.82"


def test_mdl_bits_of_two_training_sizes_are_never_averaged(tmp_path):
    probe_record(tmp_path / "a", "mdl_probe", {"online_bits": 90000.0, "compression": 2.0}, sentences=1000, epochs=40)
    probe_record(tmp_path / "b", "mdl_probe", {"online_bits": 120000.0, "compression": 2.1}, sentences=1200, epochs=40)
    cells = {row[1]: row[3 + 4] for row in _rows(structural_mdl_table(collect([tmp_path]).runs))
             if row[2] == "layer_0"}
    assert cells == {"trained, 1000 train sentences": "90000", "trained, 1200 train sentences": "120000"}


def test_one_probe_with_two_epoch_caps_is_two_rows_and_the_other_probes_cap_stays_beside_it(tmp_path):
    probe_record(tmp_path / "s10", "structural_probe", {"uuas": 50.0}, epochs=10)
    probe_record(tmp_path / "s30", "structural_probe", {"uuas": 60.0}, epochs=30)
    probe_record(tmp_path / "mdl", "mdl_probe", {"online_bits": 30000.0, "compression": 7.0}, epochs=40)
    rows = [row for row in _rows(structural_mdl_table(collect([tmp_path]).runs)) if row[2] == "layer_0"]
    assert [(row[1], row[3]) for row in rows] == [
        ("trained, MDL linear 40 epochs; structural probes 10 epochs", "50.00"),
        ("trained, structural probes 30 epochs", "60.00")]
    assert rows[0][7] == "30000" and rows[1][7] == "—"


def test_one_size_and_one_cap_keep_the_plain_label(tmp_path):
    probe_record(tmp_path / "s", "structural_probe", {"uuas": 50.0})
    probe_record(tmp_path / "m", "mdl_probe", {"online_bits": 30000.0, "compression": 7.0}, epochs=40)
    assert [row[1] for row in _rows(structural_mdl_table(collect([tmp_path]).runs))] == ["trained"] * 3


# item 4: an empty denominator is null with a count ------------------------------------------------------------------

def test_uuas_and_root_accuracy_without_a_gold_edge_are_null_with_their_count():
    one_word = [np.zeros((1, 1))]
    word_and_dot = [sm.tree_distances([0, 1])]
    assert sm.uuas(one_word, one_word, [np.zeros(1, bool)]) == (None, 0)                  # old: 0.0
    assert sm.uuas(word_and_dot, word_and_dot, [np.array([False, True])]) == (None, 0)
    assert sm.root_accuracy([np.zeros(1)], [np.zeros(1)], [np.zeros(1, bool)]) == (None, 0)   # old: 100.0
    # a split with one real choice keeps the authors' number over every sentence
    two = np.asarray([1.0, 0.0])
    assert sm.root_accuracy([np.zeros(1), two], [np.zeros(1), two], [np.zeros(1, bool), np.zeros(2, bool)]) == (
        100.0, 1)


def test_the_structural_cli_records_null_and_the_count_never_a_rounded_number():
    from elmo_bench.probe.structural.probe import _scored

    assert _scored("uuas", sm.Scored(None, 0)) == {"uuas": None, "uuas_count": 0}
    assert _scored("root_acc", sm.Scored(66.666666, 3)) == {"root_acc": 66.67}


def test_the_report_shows_a_null_uuas_as_missing_not_zero(tmp_path):
    probe_record(tmp_path / "s", "structural_probe", {"uuas": None, "uuas_count": 0, "root_acc": None,
                                                      "root_acc_count": 0, "dspr": 0.5})
    table = structural_mdl_table(collect([tmp_path]).runs)
    row = _rows(table)[0]
    assert row[3] == "—" and row[5] == "—" and row[4] == "0.500"
    assert table.records[0]["test"]["uuas"] is None
    assert ("Nothing to score (no gold edge: every sentence one word or punctuation), recorded as null with count 0: "
            "test layer_0_root_acc, test layer_0_uuas, test layer_1_root_acc") in table.notes[-1]


# item 3: every run read is in a table, or counted as skipped with its reason ---------------------------------------

def _edge(seed: int, mode: str, layer: int | None, dev: float, test: float, fraction: float = 1.0,
          weights: list[float] | None = None) -> dict[str, Any]:
    from tests.test_edge_report import edge

    out = edge(seed, mode, layer, dev, test, weights)
    out["data"]["fraction"] = out["config"]["data"]["fraction"] = fraction
    return out


def test_edge_runs_on_part_of_the_data_are_their_own_labelled_row(tmp_path):
    from tests.test_report_golden import write

    for name, fraction in (("full", 1.0), ("half", 0.5)):
        write(tmp_path / "r", f"{name}/l0", _edge(1, "layer", 0, 70.0, 69.0, fraction))
        write(tmp_path / "r", f"{name}/mix", _edge(1, "learned", None, 80.0, 79.0 - fraction, fraction,
                                                   [0.2, 0.3, 0.5]))
    report = json.loads(build_report([str(tmp_path / "r")], tmp_path / "o", "json", significance=False).read_text())
    rows = report["tables"]["edge_probing"]["rows"]
    assert sorted((r["data"], r["full"]["mean"]) for r in rows) == [("conll2003_edge", 78.0),
                                                                    ("conll2003_edge (0.5 of train)", 78.5)]
    assert report["summary"].startswith("4 results.json files read, 4 runs used (0 duplicate run(s) of one "
                                        "experiment kept once, 0 skipped).")


def test_runs_no_table_shows_are_counted_as_skipped_with_the_reason(tmp_path):
    from tests.test_report_golden import result, write

    write(tmp_path / "r", "ner/base", result("ner", "glove", 1, data="conll2003", test=90.0))
    write(tmp_path / "r", "ner/elmo", result("ner", "glove_elmo", 1, data="conll2003", test=91.0))
    write(tmp_path / "r", "ner/layer1", result("ner", "glove_elmo", 1, data="conll2003", test=92.0, mode="layer",
                                               layer=1, mix={"name": "layer", "layer": 1}))
    write(tmp_path / "r", "edge/glove", result("edge_ner", "glove", 1, data="conll2003_edge", test=50.0))
    text = build_report([str(tmp_path / "r")], tmp_path / "o", "md", significance=False).read_text()
    assert ("4 results.json files read, 2 runs used (0 duplicate run(s) of one experiment kept once, 2 skipped). "
            "Read but in no table (2, counted as skipped): 1 edge-probing run(s) without encoder layers (nothing to "
            "probe); 1 ner run(s) with mix=layer (the task tables compare the learned mix and the top layer; single "
            "layers of the encoder are compared by the probes).") in text
    report = json.loads(build_report([str(tmp_path / "r")], tmp_path / "j", "json", significance=False).read_text())
    assert [u["runs"] for u in report["unshown"]] == [1, 1]


def test_pos_runs_on_part_of_the_data_are_a_labelled_table6_row():
    from elmo_bench.report.collect import Run
    from tests.report_sections import probe_report
    table6 = probe_report("pos").table6
    from tests.test_report_encoders import BILM

    def pos(fraction: float, accuracy: float) -> Run:
        record = RunRecord(task="pos", metrics={}, bilm=BILM)
        return Run(path=Path("/x"), task="pos", embedder="elmo", seed=1, data="ud_ewt_pos", fraction=fraction,
                   main_metric="accuracy", metrics={"test": {"accuracy": accuracy}},
                   elmo={"mode": "layer", "layer_index": 1}, record=record)

    rows = table6([pos(1.0, 90.0), pos(0.1, 80.0)]).rows
    assert [row[:2] for row in rows[:2]] == [["ud_ewt_pos", "90.00"], ["ud_ewt_pos (0.1 of train)", "80.00"]]


# item 5, tables: say "—" and why, count what exists, title by encoder -------------------------------------------------

def test_edge_best_layer_is_missing_with_a_note_when_no_layer_but_the_lexical_was_probed_alone(tmp_path):
    from tests.test_report_golden import write

    write(tmp_path / "r", "l0", _edge(1, "layer", 0, 70.0, 69.0))
    write(tmp_path / "r", "mix", _edge(1, "learned", None, 80.0, 79.0, weights=[0.2, 0.3, 0.5]))
    text = build_report([str(tmp_path / "r")], tmp_path / "o", "md", significance=False).read_text()
    row = next(line for line in text.splitlines() if line.startswith("| encoder | edge_ner |")
               or line.startswith("| ELMo (biLM 730677ca) | edge_ner |"))
    assert row.split(" | ")[7] == "—"                                            # old: "0"
    assert ("edge_ner (conll2003_edge): best layer —: no single-layer run of layer 1, 2 (mix=layer mix.layer=k), "
            "so no layer can be called the best of 0..2.") in text


def test_directions_without_declarations_count_the_tasks_that_ran():
    from elmo_bench.report.collect import Run
    from elmo_bench.report.directions import directions_table
    from tests.test_report_encoders import BILM

    def ner(embedder: str, value: float) -> Run:
        elmo = {"mode": "learned"} if embedder != "glove" else None
        return Run(path=Path("/x"), task="ner", embedder=embedder, seed=1, data="conll2003", fraction=1.0,
                   main_metric="f1", metrics={"test": {"f1": value}}, elmo=elmo,
                   record=RunRecord(task="ner", metrics={}, bilm=BILM if elmo else None))

    table = directions_table([ner("glove", 90.0), ner("glove_elmo", 91.0)])
    tasks_row = next(r for r in table.records if r["direction"] == "elmo_above_baseline_tasks")
    assert tasks_row["ours"].startswith("1 of 1 tasks (") and tasks_row["paper"] == "—"     # old: "1 of 0 tasks", "0 of 0"
    assert tasks_row["holds"] is None                                             # the tasks not run are unknown


def test_table6_and_table5_are_titled_by_the_encoder_whose_layers_they_show(tmp_path):
    from tests.report_sections import probe_report
    table5, table6 = probe_report("wsd").table5, probe_report("pos").table6
    from tests.test_report_encoders import BERT, probe_records

    for name, encoder in (("bert", BERT), ("bilm", None)):
        wsd, pos = probe_records(encoder, [60.0, 66.0, 68.5])
        for task, record in (("wsd", wsd), ("pos", pos)):
            path = tmp_path / name / task
            path.mkdir(parents=True)
            (path / "results.json").write_text(json.dumps(record))
    bert, both = collect([tmp_path / "bert"]).runs, collect([tmp_path]).runs
    assert table6(bert).title == "Table 6: POS probe, accuracy per bert-tiny layer"     # old: "per biLM layer"
    assert table5(bert).title == "Table 5: WSD probe, F1 per bert-tiny layer"
    assert table6(both).title == "Table 6: POS probe, accuracy per encoder layer"
    assert table6(collect([tmp_path / "bilm"]).runs).title == "Table 6: POS probe, accuracy per biLM layer"


# item 2 (as issue 54 changed it): duplicates that disagree are one line naming both files, and the report goes on
# without them --------------------------------------------------------------------------------------------------------

def _control_record(path: Path, difference: float) -> None:
    """A probe-control record (pos_probe with a probing block): its best-layer difference lives in its extras."""
    best = {"split": "test", "best": "layer_0", "runner_up": "layer_2", "best_accuracy": 66.02,
            "runner_up_accuracy": 45.43, "difference": difference, "p_value": 0.001}
    path.mkdir(parents=True)
    RunRecord(task="pos_probe", embedder="elmo", seed=0, config={}, metrics={"test": {"linear/layer_0_accuracy": 66.02}},
              data={"name": "ud_ewt_pos", "fraction": 1.0, "train_sentences": 1000}, main_metric="", elmo=None,
              bilm=SHIPPED, encoder=ENCODER,
              extra={"probing": {"probes": ["linear"], "seeds": [0]}, "best_layer": {"linear": best}}
              ).write(path / "results.json")


@pytest.mark.parametrize("names", [("a", "b"), ("b", "a")])
def test_disagreeing_duplicates_are_one_line_naming_both_files_and_the_report_goes_on(tmp_path, names, capsys):
    from elmo_bench.commands.main import main

    _control_record(tmp_path / "r" / names[0], 20.60)
    _control_record(tmp_path / "r" / names[1], 99.0)
    _control_record(tmp_path / "r" / "other", 20.60)                          # another seed: shown
    other = json.loads((tmp_path / "r" / "other" / "results.json").read_text())
    (tmp_path / "r" / "other" / "results.json").write_text(json.dumps({**other, "seed": 1}))
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "o"), "--no-bootstrap", "--format", "json"]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "disagree" in line]
    assert len(err) == 1 and err[0].startswith("warning: ")
    assert str(tmp_path / "r" / "a" / "results.json") in err[0] and str(tmp_path / "r" / "b" / "results.json") in err[0]
    values = "20.6 vs 99.0" if names == ("a", "b") else "99.0 vs 20.6"        # a's value first: a sorts first
    assert f"(best_layer.linear.difference: {values}, in that order)" in err[0]
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert [len(d["files"]) for d in report["disagreeing"]] == [2]
    assert [run.seed for run in collect([tmp_path / "r"]).runs] == [1]        # never averaged with seed 1
    assert "disagree, none shown: 1 set(s)" in report["summary"]


def test_ridge_records_streamed_and_gathered_are_one_experiment_and_agree(tmp_path):
    """probe=ridge with probe.stream=true and false gives the same numbers by design, in batches or in one: the two
    records (docs/probes.md's two commands) are one experiment, and how they were computed (``stream``,
    ``largest_batch``) is no disagreement; a number of ``printed`` that differs still is."""
    printed = {"test": {"layer_0": 84.1, "layer_1": 92.3}, "ridge": {"layer_0": 0.001}}
    for name, stream, largest in (("streamed", True, 4094), ("gathered", False, 39802)):
        path = tmp_path / "r" / name
        path.mkdir(parents=True)
        RunRecord(task="ridge_probe", embedder="elmo", seed=1, config={}, metrics={"test": {"layer_0": 84.1}},
                  data={"name": "ud_ewt_pos", "fraction": 1.0, "train_sentences": 2000}, main_metric="", elmo=None,
                  bilm=SHIPPED, encoder=ENCODER,
                  extra={"printed": {**printed, "stream": stream, "largest_batch": largest},
                         "probe": {"name": "ridge", "settings": {"stream": stream, "batch_tokens": 4096 if stream
                                                                 else 2048, "ridge_grid": [0.001]}}}
                  ).write(path / "results.json")
    found = collect([tmp_path / "r"])
    assert found.duplicates == 1 and len(found.runs) == 1
    changed = json.loads((tmp_path / "r" / "gathered" / "results.json").read_text())
    changed["printed"]["test"]["layer_1"] = 92.4                         # "gathered" sorts first
    (tmp_path / "r" / "gathered" / "results.json").write_text(json.dumps(changed))
    found = collect([tmp_path / "r"])
    assert found.runs == [] and found.disagreeing[0].where == "printed.test.layer_1: 92.4 vs 92.3"
    changed["printed"]["test"]["layer_1"] = 92.3
    changed["probe"]["settings"]["ridge_grid"] = [0.01]                     # a setting that changes the numbers:
    (tmp_path / "r" / "gathered" / "results.json").write_text(json.dumps(changed))   # another experiment
    found = collect([tmp_path / "r"])
    assert len(found.runs) == 2 and found.duplicates == 0 and not found.disagreeing


def test_an_older_format_record_that_agrees_gives_way_to_the_newer_one_whatever_the_paths(tmp_path):
    from tests.test_report_golden import result, write

    older = result("ner", "glove", 1, data="conll2003", test=90.0, dev=91.0)
    newer = {**older, "history": [{"epoch": 0, "dev_metric": 91.0}], "device": {"kind": "cpu"}}   # later keys
    for first, second in (("a", "b"), ("b", "a")):
        root = tmp_path / first
        write(root, f"{first}/run", newer)
        write(root, f"{second}/run", older)
        found = collect([root])
        assert found.duplicates == 1 and [r.path.parent.parent.name for r in found.runs] == [first]
    older = {**older, "metrics": {"test": {"f1": 91.5}, "dev": {"f1": 91.0}}}
    write(tmp_path / "c", "a/run", newer)
    write(tmp_path / "c", "b/run", older)
    found = collect([tmp_path / "c"])
    assert found.runs == [] and found.disagreeing[0].where == "metrics.test.f1: 90.0 vs 91.5"


# item 6: the figure check refuses what the issue found ---------------------------------------------------------------

def test_the_figure_check_finds_each_defect_the_issue_saw():
    import matplotlib.pyplot as plt

    from tests.test_report_figure_layout import layout_problems

    fig, (covered, empty) = plt.subplots(1, 2)
    covered.bar([0.0, 1.0], [0.9, 0.9], width=0.6, label="Δ share")    # the second bar crosses x = 1.1
    covered.plot([0.0, 1.0], [0.5, 0.5], color="C1", label="trained")
    covered.plot([0.0, 1.0], [0.2, 0.2], color="C1", label="random (lstm)")   # drawn as "trained"
    covered.set_xlim(-0.1, 1.1)
    covered.set_xlabel("relative depth")                               # no y label
    covered.legend(loc="upper left")                                    # over the first bar
    empty.set_xlabel("x")
    empty.set_ylabel("y")
    empty.legend(handles=[])                                            # nothing drawn, nothing in the legend
    found = "\n".join(layout_problems(fig))
    plt.close(fig)
    for expected in ("has no y label", "draws nothing", "an empty legend", "is cut by the axes",
                     "the legend covers a bar", "are drawn alike"):
        assert expected in found, expected


def test_control_probes_of_two_epoch_budgets_are_two_blocks_not_one_mean(tmp_path):
    from tests.report_sections import probe_report
    probe_control_table = probe_report("pos_controls").probe_control_table

    for name, epochs, accuracy in (("short", 10, 70.0), ("long", 40, 80.0)):
        path = tmp_path / name
        path.mkdir()
        RunRecord(task="pos_probe", embedder="elmo", seed=0, config={"max_epochs": epochs, "hidden": 256},
                  metrics={"dev": {"linear/layer_0_accuracy": accuracy}, "test": {"linear/layer_0_accuracy": accuracy}},
                  data={"name": "ud_ewt_pos", "fraction": 1.0, "train_sentences": 1000}, main_metric="", elmo=None,
                  bilm=SHIPPED, encoder=ENCODER, extra={"probing": {"probes": ["linear"], "seeds": [0]}}
                  ).write(path / "results.json")
    table = probe_control_table(collect([tmp_path]).runs)
    test_rows = [(row[1], row[4]) for row in table.rows if row[2] == "test" and row[0].startswith("ELMo")]
    assert test_rows == [("trained, 10 epochs, hidden 256", "70.00"), ("trained, 40 epochs, hidden 256", "80.00")]


def test_edge_runs_of_two_trainer_budgets_are_two_rows_not_one_overwriting_the_other(tmp_path):
    from tests.test_report_golden import write

    for epochs, test in ((5, 60.0), (20, 80.0)):
        for name, run in (("l0", _edge(1, "layer", 0, 50.0, 50.0)),
                          ("mix", _edge(1, "learned", None, test, test, weights=[0.2, 0.3, 0.5]))):
            run["config"]["trainer"]["max_epochs"] = epochs
            write(tmp_path / "r", f"e{epochs}/{name}", run)
    report = json.loads(build_report([str(tmp_path / "r")], tmp_path / "o", "json", significance=False).read_text())
    rows = report["tables"]["edge_probing"]["rows"]
    assert sorted((r["data"], r["full"]["mean"]) for r in rows) == [("conll2003_edge, max_epochs=20", 80.0),
                                                                    ("conll2003_edge, max_epochs=5", 60.0)]


def test_task_runs_no_table_compares_are_counted_with_their_reason(tmp_path):
    from elmo_bench.report.unshown import unshown
    from tests.report_sections import plugins
    from tests.test_report_golden import result, write

    write(tmp_path, "base", result("ner", "glove", 1, data="conll2003", test=90.0))
    write(tmp_path, "elmo", result("ner", "glove_elmo", 1, data="conll2003", test=91.0))
    write(tmp_path, "two_axes", result("ner", "glove_elmo", 1, data="conll2003", dev=91.0, l2=1.0, placement="both",
                                       mix={"lambda": 1.0, "placement": "both"}))
    write(tmp_path, "one_fraction", result("srl", "glove", 1, data="conll2005", test=50.0, fraction=0.1))
    write(tmp_path, "t2", result("ner", "glove_elmo", 1, data="conll2003", dev=90.5, l2=1.0, mix={"lambda": 1.0}))
    reasons = dict(unshown(collect([tmp_path]).runs, (), plugins()))
    assert reasons == {
        "ner run(s) with mix=learned and lambda, placement changed together (each task table varies one setting from "
        "the task's own)": 1,
        "srl sample-efficiency run(s) at a single training fraction (Figure 1 needs two)": 1}


def test_wsd_probes_of_two_training_sizes_are_two_row_sets_not_one_mean(tmp_path):
    from tests.report_sections import probe_report
    table5 = probe_report("wsd").table5

    for size, f1 in ((1000, 50.0), (20000, 60.0)):
        path = tmp_path / str(size)
        path.mkdir()
        (path / "results.json").write_text(json.dumps({
            "task": "wsd", "bilm": SHIPPED, "data": {"train_sentences": size},
            "metrics": {"ALL": {"layer_0_f1": f1, "layer_1_f1": f1, "layer_2_f1": f1}}}))
    rows = [row[:2] for row in table5(collect([tmp_path]).runs).rows if not row[0].startswith("paper")]
    assert rows == [["ALL (1000 train sentences)", "50.00"], ["ALL (20000 train sentences)", "60.00"]]   # old: 55.00


def test_pos_runs_table6_cannot_show_are_counted_with_their_reason(tmp_path):
    from elmo_bench.report.unshown import unshown
    from tests.report_sections import plugins
    from tests.test_report_golden import result, write

    write(tmp_path, "layer1", result("pos", "elmo", 1, data="ud_ewt_pos", test=96.0, main="accuracy", mode="layer",
                                     layer=1))
    write(tmp_path, "top", result("pos", "elmo", 1, data="ud_ewt_pos", test=95.0, main="accuracy", mode="top",
                                  mix={"name": "top"}))
    assert dict(unshown(collect([tmp_path]).runs, (), plugins())) == {
        "POS run(s) with mix=top (Table 6 shows single layers and the task's learned mix)": 1}
