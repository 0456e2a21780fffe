"""Issue 36 in the report: the control-task section from hand-made records, kept apart from the older tables, and a
figure whose panels' text boxes do not overlap."""
from __future__ import annotations

import json
from pathlib import Path

from elmo_bench.records.run_record import RunRecord

ROWS = ("layer_0", "layer_1", "layer_2")


def _record(path: Path, accuracy: dict, control: dict, random: dict | None = None) -> None:
    keys = {f"{p}/{r}": (accuracy[p][i], control[p][i]) for p in accuracy for i, r in enumerate(ROWS)}
    metrics = {s: {f"{k}_accuracy": a for k, (a, _) in keys.items()} for s in ("dev", "test")}
    extra = {"control": {s: {k: c for k, (_, c) in keys.items()} for s in ("dev", "test")},
             "selectivity": {s: {k: a - c for k, (a, c) in keys.items()} for s in ("dev", "test")},
             "probing": {"probes": list(accuracy), "seeds": [1], "control": True},
             "best_layer": {"linear": {"split": "test", "best": "layer_1", "runner_up": "layer_2", "best_accuracy": 90.0,
                                       "runner_up_accuracy": 89.0, "difference": 1.0, "p_value": 0.01,
                                       "samples": 1000}}}
    if random:
        extra["random_init"] = random
    bilm_hash = "abcdef0123456789" + (f"-random-{random['mode']}-{random['seed']}" if random else "")
    path.mkdir(parents=True)
    RunRecord(task="pos_probe", embedder="elmo", seed=1, config={}, data={"name": "ud_ewt_pos",
              "train_sentences": 2000, "all_train_sentences": None}, metrics=metrics,
              main_metric="linear/layer_1_accuracy", mixes={}, elmo=None, epochs={"run": 0, "best": None, "history": []},
              bilm={"name": "shipped", "hash": bilm_hash, "layers": 3, "dim": 256,
                    **({"trained_hash": "abcdef0123456789"} if random else {})},
              encoder={"kind": "bilm", "hash": bilm_hash, "layers": 3, "dim": 256, **({"random_init": random["mode"],
                       "random_seed": random["seed"]} if random else {})},
              extra=extra).write(path / "results.json")


def test_control_section_tables_and_paper_rows(tmp_path):
    from elmo_bench.commands.report import build_report

    _record(tmp_path / "runs" / "trained", {"linear": [80.0, 90.0, 89.0], "mlp1": [82.0, 91.0, 90.0]},
            {"linear": [60.0, 62.0, 55.0], "mlp1": [75.0, 80.0, 70.0]})
    _record(tmp_path / "runs" / "random", {"linear": [70.0, 60.0, 50.0], "mlp1": [75.0, 70.0, 60.0]},
            {"linear": [65.0, 50.0, 40.0], "mlp1": [72.0, 66.0, 55.0]}, {"mode": "all", "seed": 0})
    out = tmp_path / "report"
    build_report([str(tmp_path / "runs")], out, "json", significance=False)
    report = json.loads((out / "report.json").read_text())
    table = report["tables"]["probe_controls"]
    trained = [r for r in table["rows"] if r["weights"] == "trained" and r["split"] == "test"]
    assert [r["row"] for r in trained] == list(ROWS)
    assert trained[1]["linear_selectivity"]["mean"] == 90.0 - 62.0
    random = [r for r in table["rows"] if r["weights"] == "random (all, seed 0)" and r["split"] == "dev"]
    assert random[0]["mlp1_control"]["mean"] == 72.0 and random[0]["encoder"] == trained[0]["encoder"]
    assert table["paper"]["linear"] == {"accuracy": 97.2, "control": 71.7, "selectivity": 25.5}
    assert table["paper"]["mlp1"]["selectivity"] == 4.7 and table["paper"]["mlp2"]["control"] == 92.1
    assert "table6" in report["tables"] and not any("linear" in json.dumps(r) for r in
                                                    report["tables"]["table6"]["rows"])   # kept out of Table 6
    assert report["tables"]["probe_best_layer"]["rows"][0]["p_value"] == 0.01
    assert "probe_selectivity.png" in report["figures"]
    build_report([str(tmp_path / "runs")], out, "md", significance=False)
    text = (out / "report.md").read_text()
    assert "| paper: ELMo (public 5.5B biLM), Hewitt & Liang 2019 | trained | dev (PTB WSJ) | layer_1 | 97.2 | 71.7 | 25.5" \
        in text


def test_selectivity_figure_panels_do_not_overlap(tmp_path, monkeypatch):
    from elmo_bench.report import figures
    from tests.report_sections import collect_with_probes as collect
    from tests.report_sections import probe_report

    _record(tmp_path / "runs" / "trained", {"linear": [80.0, 90.0, 89.0], "mlp1": [82.0, 91.0, 90.0]},
            {"linear": [60.0, 62.0, 55.0], "mlp1": [75.0, 80.0, 70.0]})
    _record(tmp_path / "runs" / "random", {"linear": [70.0, 60.0, 50.0], "mlp1": [75.0, 70.0, 60.0]},
            {"linear": [65.0, 50.0, 40.0], "mlp1": [72.0, 66.0, 55.0]}, {"mode": "all", "seed": 0})
    kept = {}
    monkeypatch.setattr(figures, "_save", lambda fig, path: kept.setdefault("fig", fig))
    assert probe_report("pos_controls").probe_selectivity_figure(collect([tmp_path / "runs"]).runs, tmp_path / "f.png")
    fig = kept["fig"]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = []
    for index, ax in enumerate(fig.axes):
        low_x, high_x = sorted(ax.get_xlim())
        low_y, high_y = sorted(ax.get_ylim())
        ticks = [t for t in ax.get_xticklabels() if low_x <= t.get_position()[0] <= high_x]    # drawn ones only
        ticks += [t for t in ax.get_yticklabels() if low_y <= t.get_position()[1] <= high_y]
        texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ticks]
        boxes += [(index, t.get_window_extent(renderer)) for t in texts if t.get_text()]
    titles = {ax.get_title() for ax in fig.axes}
    assert len(titles) == len(fig.axes)                  # every panel says what tells it apart
    clashes = [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:]
               if a != b and box_a.overlaps(box_b)]
    assert not clashes


def test_a_run_of_several_seeds_is_its_own_block_with_its_recorded_sd(tmp_path):
    from tests.report_sections import probe_report
    probe_control_table = probe_report("pos_controls").probe_control_table
    from tests.report_sections import collect_with_probes as collect

    _record(tmp_path / "runs" / "one", {"linear": [80.0, 90.0, 89.0]}, {"linear": [60.0, 62.0, 55.0]})
    _record(tmp_path / "runs" / "three", {"linear": [81.0, 91.0, 88.0]}, {"linear": [61.0, 63.0, 54.0]})
    record = json.loads((tmp_path / "runs" / "three" / "results.json").read_text())
    record["probing"]["seeds"] = [1, 2, 3]
    record["sd"] = {"control": {"test": {"linear/layer_1": 0.5}}}
    (tmp_path / "runs" / "three" / "results.json").write_text(json.dumps(record))
    table = probe_control_table(collect([tmp_path / "runs"]).runs)
    blocks = {(r["weights"], r["split"], r["row"]): r for r in table.records}
    assert blocks[("trained", "test", "layer_1")]["linear_control"] == {"mean": 62.0, "std": None, "n": 1}
    assert blocks[("trained, seeds 1,2,3", "test", "layer_1")]["linear_control"] == {"mean": 63.0, "std": 0.5, "n": 3}
