"""Issue 46 item 9: the edge-probing report (table, depths, figure) and the other relative-depth views over an
encoder that keeps some of a deep model's layers (``encoder.layers=[0,4,8,11]`` of a 12-layer model, recorded as
``encoder_layer_indices``): runs name layers by the model's number (mix.layer = 0/4/8/11), so the best layer is
named by its number, Δ, the expected layer and the centre of gravity weigh layer numbers, and relative depth is
l / 11, never a position among the four kept layers (which the biLM's 0..2 could not tell apart)."""
from __future__ import annotations

import json

import matplotlib
import pytest

from elmo_bench.commands.report import build_report
from elmo_bench.report.edge_depth import centre_of_gravity, expected_layer, task_depth
from elmo_bench.report.edge_figure import _panel
from elmo_bench.report.figures import plt
from elmo_bench.report.probe_blocks import Block
from elmo_bench.report.probe_depth import probe_depth_curves
from tests.report_sections import probe_report

depth_points = probe_report("structural").depth_points
from tests.report_sections import plugins, probe_report
from tests.report_sections import read_with_probes as read_run
from tests.test_report_golden import result, write

WSD = probe_report("wsd").WSD

matplotlib.use("Agg")
KEPT = [0, 4, 8, 11]
DEEP = {"kind": "transformers", "model": "tiny-llama-12", "revision": None, "hash": "0123456789abcdef",
        "pooling": "last", "window": 512, "precision": "fp32", "model_type": "llama", "causal": True,
        "encoder_layer_indices": KEPT, "dtype": "float32", "layers": 4, "dim": 32}
W1, W2 = [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]


def approx_pairs(pairs):
    """A list of ``pytest.approx`` of each (x, y) pair, pytest's default tolerance on each number, as ``approx`` of
    the whole list gave before pytest 9.2 refused nested data ("does not support nested data structures")."""
    return [pytest.approx(pair) for pair in pairs]


def edge(seed, mode, layer, dev, test=None, weights=None):
    """An edge_pos results.json of the deep encoder; ``layer`` the model's number (mix.layer)."""
    mixes = {"input": {"weights": weights, "gamma": 1.0}} if weights else None
    out = result("edge_pos", "elmo", seed, data="ud_ewt_edge", dev=dev, test=test, mode=mode, layer=layer,
                 mixes=mixes, mix={"layer": layer})
    return {**out, "bilm": None, "encoder": DEEP}


def deep_tree(root):
    """Seed 1: every single layer, both middle prefixes, the full mix; seed 2: lexical and full mix only."""
    for k, dev, test in ((0, 60.0, 59.0), (4, 75.0, 74.0), (8, 80.0, 78.0), (11, 72.0, 71.0)):
        write(root, f"l{k}-s1", edge(1, "layer", k, dev, test))
    write(root, "c4-s1", edge(1, "cumulative", 4, 70.0, 69.0))
    write(root, "c8-s1", edge(1, "cumulative", 8, 78.0, 77.0))
    write(root, "full-s1", edge(1, "learned", None, 82.0, 81.0, W1))
    write(root, "l0-s2", edge(2, "layer", 0, 62.0, 61.0))
    write(root, "full-s2", edge(2, "learned", None, 83.0, 84.0, W2))


def test_depths_weigh_the_models_layer_numbers():
    # Δ over prefixes 0 | 0,4 | 0,4,8 | 0,4,8,11 = 60, 70, 78, 82: Δ(4) = 10, Δ(8) = 8, Δ(11) = 4
    assert expected_layer([10.0, 8.0, 4.0], [4, 8, 11]) == pytest.approx((40 + 64 + 44) / 22)
    assert centre_of_gravity(W1, KEPT) == pytest.approx(0.8 + 2.4 + 4.4)                     # 7.6, not 2.0
    row = task_depth({0: 60.0, 4: 70.0, 8: 78.0, 11: 82.0}, {0: 60.0, 4: 75.0, 8: 80.0, 11: 72.0}, W1, KEPT)
    assert row["best_layer"] == 8 and row["deltas"] == pytest.approx([10.0, 8.0, 4.0])
    assert row["expected_layer"] == pytest.approx(148 / 22) and row["centre_of_gravity"] == pytest.approx(7.6)
    with pytest.raises(ValueError, match="without a gap"):
        task_depth({0: 60.0, 4: 70.0, 11: 82.0}, {}, None, KEPT)
    with pytest.raises(ValueError, match="4 values for 3 layers"):
        centre_of_gravity(W1, [0, 4, 8])


def test_edge_row_of_a_deep_encoders_kept_layers(tmp_path):
    root = tmp_path / "results"
    deep_tree(root)
    report = json.loads(build_report([str(root)], tmp_path / "out", fmt="json", significance=False).read_text())
    rows = report["tables"]["edge_probing"]["rows"]
    assert len(rows) == 1
    row = rows[0]
    assert row["layers"] == 12 and row["layer_indices"] == KEPT                 # L = 11, the model's last layer
    assert row["lexical"]["mean"] == pytest.approx(60.0) and row["full"]["mean"] == pytest.approx(82.5)
    assert row["gain"]["mean"] == pytest.approx(22.5)                           # 81 − 59, 84 − 61
    assert row["best_layer"] == 8                                               # dev 61 / 75 / 80 / 72: by number
    assert row["deltas"] == {"1": pytest.approx([10.0, 8.0, 4.0])}              # seed 2 has no cumulative runs
    assert row["expected_layer"]["mean"] == pytest.approx(148 / 22) and row["expected_layer"]["n"] == 1
    assert row["centre_of_gravity"]["mean"] == pytest.approx((7.6 + 3.9) / 2)   # 0·.4 + 4·.3 + 8·.2 + 11·.1 = 3.9
    assert row["weights"] == pytest.approx([0.25] * 4)
    assert "no single-layer run" not in json.dumps(report["tables"]["edge_probing"]["notes"])
    markdown = build_report([str(root)], tmp_path / "md", fmt="md", significance=False).read_text()
    line = next(x for x in markdown.splitlines() if "| edge_pos |" in x)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[3] == "11" and cells[7] == "8" and cells[8] == "6.73" and cells[9].startswith("5.75")
    assert "the figure's relative depth is l / L" in markdown


def test_a_missing_single_layer_is_named_by_its_number(tmp_path):
    root = tmp_path / "results"
    deep_tree(root)
    (root / "l8-s1" / "results.json").unlink()
    report = json.loads(build_report([str(root)], tmp_path / "out", fmt="json", significance=False).read_text())
    assert report["tables"]["edge_probing"]["rows"][0]["best_layer"] is None
    assert ("no single-layer run of layer 8 (mix=layer mix.layer=k), so no layer can be called the best of layers "
            "0, 4, 8, 11.") in json.dumps(report["tables"]["edge_probing"]["notes"], ensure_ascii=False)


def test_the_figure_draws_the_kept_layers_at_their_relative_depth(tmp_path):
    root = tmp_path / "results"
    deep_tree(root)
    report = json.loads(build_report([str(root)], tmp_path / "out", fmt="json", significance=False).read_text())
    assert (tmp_path / "out" / "edge_pipeline.png").stat().st_size > 0
    fig, ax = plt.subplots()
    assert _panel(ax, report["tables"]["edge_probing"]["rows"][0])
    bars = [p.get_x() + p.get_width() / 2 for p in ax.patches]
    assert bars == pytest.approx([4 / 11, 8 / 11, 1.0])                       # Δ(4), Δ(8), Δ(11)
    assert [p.get_height() for p in ax.patches] == pytest.approx([10 / 22, 8 / 22, 4 / 22])
    assert ax.patches[0].get_width() == pytest.approx(0.6 * 3 / 11)            # 0.6 of the narrowest gap (8 → 11)
    weights = ax.lines[0]
    assert list(weights.get_xdata()) == pytest.approx([0.0, 4 / 11, 8 / 11, 1.0])
    assert list(weights.get_ydata()) == pytest.approx([0.25] * 4)
    marks = [line.get_xdata()[0] for line in ax.lines[1:]]
    assert marks == pytest.approx([148 / 22 / 11, 5.75 / 11])                  # expected layer, centre of gravity
    plt.close(fig)


def test_other_depth_views_divide_by_the_deepest_layer_number(tmp_path):
    """probe_depth, structural_mdl and bits_erasure: layer k of the kept [0, 4, 8, 11] is at k / 11."""
    wsd = {"task": "wsd", "metrics": {"ALL": {f"layer_{k}_f1": 50.0 + k for k in KEPT}}, "encoder": DEEP}
    structural = {**result("structural_probe", "elmo", 0, data="ptb", main="layer_4_uuas"), "elmo": None,
                  "bilm": None, "encoder": DEEP}
    structural["metrics"] = {"test": {f"layer_{k}_uuas": 0.5 + k / 100 for k in KEPT}}
    write(tmp_path, "wsd", wsd)
    write(tmp_path, "structural", structural)
    runs = [read_run(tmp_path / name / "results.json") for name in ("wsd", "structural")]
    curves = probe_depth_curves(runs[:1], None, plugins())
    assert [(p.layer, p.depth) for p in curves[(WSD, "ALL")]["tiny-llama-12 (last pooling)"]] == approx_pairs(
        [(0, 0.0), (4, 4 / 11), (8, 8 / 11), (11, 1.0)])
    [(_, points)] = depth_points(runs[1:], "uuas")
    assert points == approx_pairs([(0.0, 0.5), (4 / 11, 0.54), (8 / 11, 0.58), (1.0, 0.61)])
    block = Block("tiny-llama-12", "trained", "upos", True, runs[1:])
    assert block.depth(8) == pytest.approx(8 / 11)


def test_control_probe_depth_divides_by_the_deepest_layer_number(tmp_path):
    """The probe-selectivity figure's points (probe_controls.depth_points) of a control-task record over [0, 4, 8, 11]."""
    from elmo_bench.records.run_record import RunRecord
    from tests.report_sections import probe_report
    control_points = probe_report("pos_controls").depth_points

    accuracy = {f"linear/layer_{k}": 80.0 + k for k in KEPT}
    RunRecord(task="pos_probe", embedder="elmo", seed=1, config={}, data={"name": "ud_ewt_pos"},
              metrics={s: {f"{k}_accuracy": v for k, v in accuracy.items()} for s in ("dev", "test")},
              main_metric="linear/layer_4_accuracy",
              mixes={}, elmo=None, epochs={"run": 0, "best": None, "history": []}, bilm=None, encoder=DEEP,
              extra={"control": {"test": {k: 70.0 for k in accuracy}}, "selectivity": {"test": {
                  k: v - 70.0 for k, v in accuracy.items()}}, "probing": {"probes": ["linear"], "seeds": [1],
                                                                        "control": True}}).write(tmp_path / "results.json")
    [points] = control_points([read_run(tmp_path / "results.json")], "linear", "accuracy").values()
    assert points == approx_pairs([(0.0, 80.0), (4 / 11, 84.0), (8 / 11, 88.0), (1.0, 91.0)])   # not 4 / 3, ...


def test_figure2_and_directions_name_a_subsets_mix_inputs_by_layer_number(tmp_path, monkeypatch):
    """A learned mix over [0, 4, 8, 11] has four weights: Figure 2's columns and ticks and Directions' weights text
    call them layers 0, 4, 8, 11, not 0, 1, 2, 3."""
    from elmo_bench.report import figures
    from elmo_bench.report.directions import _learned_weights
    from elmo_bench.report.run_tables import figure2_table

    for seed, weights in ((1, W1), (2, W2)):
        write(tmp_path, f"ner{seed}", {**result("ner", "glove_elmo", seed, data="conll2003", test=90.0,
                                                mixes={"input": {"weights": weights, "gamma": 1.0}}),
                                       "encoder": DEEP})
    runs = [read_run(tmp_path / f"ner{seed}" / "results.json") for seed in (1, 2)]
    table = figure2_table(runs)
    assert table.header == ["Task", "Data", "Mix", "layer 0", "layer 4", "layer 8", "layer 11", "n"]
    assert table.rows == [["ner", "conll2003", "input", "0.250", "0.250", "0.250", "0.250", "2"]]
    drawn = []
    monkeypatch.setattr(figures, "_save", lambda fig, path: drawn.append(fig))
    assert figures.figure2(runs, tmp_path / "figure2.png")
    ax = drawn[0].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "4", "8", "11"] and ax.get_xlabel() == "model layer"
    plt.close(drawn[0])
    assert _learned_weights(runs).startswith("learned layer weights (layer 0 / 4 / 8 / 11, mean over seeds): input "
                                             "0.25 / 0.25 / 0.25 / 0.25")


SHORT = [0, 4, 8]   # an explicit list that stops short of the last layer of a 13-state model (layers 0..12)
SHORT_DEEP = {**DEEP, "encoder_layer_indices": SHORT, "layers": 3, "model_layers": 13}


def test_a_list_short_of_the_last_layer_is_scaled_by_the_models_last_layer(tmp_path):
    """With ``model_layers`` recorded (since this issue), L is the model's last layer (12), not the deepest kept (8):
    the edge row, its figure, and the other depth views put layer 8 at 8/12."""
    from elmo_bench.records.run_record import RunRecord
    from tests.report_sections import probe_report
    control_points = probe_report("pos_controls").depth_points

    root = tmp_path / "results"
    for k, dev in ((0, 60.0), (4, 75.0), (8, 80.0)):
        write(root, f"l{k}", {**edge(1, "layer", k, dev, dev - 1), "encoder": SHORT_DEEP})
    write(root, "c4", {**edge(1, "cumulative", 4, 70.0, 69.0), "encoder": SHORT_DEEP})
    write(root, "full", {**edge(1, "learned", None, 82.0, 81.0, [0.2, 0.3, 0.5]), "encoder": SHORT_DEEP})
    report = json.loads(build_report([str(root)], tmp_path / "out", fmt="json", significance=False).read_text())
    [row] = report["tables"]["edge_probing"]["rows"]
    assert row["layers"] == 13 and row["layer_indices"] == SHORT and row["best_layer"] == 8
    fig, ax = plt.subplots()
    assert _panel(ax, row)
    assert [p.get_x() + p.get_width() / 2 for p in ax.patches] == pytest.approx([4 / 12, 8 / 12])
    assert list(ax.lines[0].get_xdata()) == pytest.approx([0.0, 4 / 12, 8 / 12])
    plt.close(fig)

    structural = {**result("structural_probe", "elmo", 0, data="ptb", main="layer_4_uuas"), "elmo": None,
                  "bilm": None, "encoder": SHORT_DEEP}
    structural["metrics"] = {"test": {f"layer_{k}_uuas": 0.5 + k / 100 for k in SHORT}}
    write(tmp_path, "structural", structural)
    wsd = {"task": "wsd", "metrics": {"ALL": {f"layer_{k}_f1": 50.0 + k for k in SHORT}}, "encoder": SHORT_DEEP}
    write(tmp_path, "wsd", wsd)
    runs = [read_run(tmp_path / name / "results.json") for name in ("structural", "wsd")]
    [(_, points)] = depth_points(runs[:1], "uuas")
    assert points == approx_pairs([(0.0, 0.5), (4 / 12, 0.54), (8 / 12, 0.58)])
    assert Block("tiny-llama-12", "trained", "upos", True, runs[:1]).depth(8) == pytest.approx(8 / 12)
    [curve] = probe_depth_curves(runs[1:], None, plugins())[(WSD, "ALL")].values()
    assert [(p.layer, p.depth) for p in curve] == approx_pairs([(0, 0.0), (4, 4 / 12), (8, 8 / 12)])

    accuracy = {f"linear/layer_{k}": 80.0 + k for k in SHORT}
    RunRecord(task="pos_probe", embedder="elmo", seed=1, config={}, data={"name": "ud_ewt_pos"},
              metrics={s: {f"{k}_accuracy": v for k, v in accuracy.items()} for s in ("dev", "test")},
              main_metric="linear/layer_4_accuracy", mixes={}, elmo=None, epochs={"run": 0, "best": None, "history": []},
              bilm=None, encoder=SHORT_DEEP,
              extra={"control": {"test": {k: 70.0 for k in accuracy}}, "selectivity": {"test": {
                  k: v - 70.0 for k, v in accuracy.items()}}, "probing": {"probes": ["linear"], "seeds": [1],
                                                                        "control": True}}).write(tmp_path / "p.json")
    [control] = control_points([read_run(tmp_path / "p.json")], "linear", "accuracy").values()
    assert control == approx_pairs([(0.0, 80.0), (4 / 12, 84.0), (8 / 12, 88.0)])
