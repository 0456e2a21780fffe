"""Issue 37 in the report: the structural-probe and MDL section from hand-made records of two encoders and their
random-weights twins, Hewitt & Manning's Table 1 beside the biLM, kept out of the older tables, and its depth figure
drawn without overlapping text."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elmo_bench.records.run_record import RunRecord

BILM = "abcdef0123456789"
MINILM = {"kind": "transformers", "model": "sentence-transformers/all-MiniLM-L6-v2", "revision": None,
          "pooling": "first", "model_type": "bert"}
#: name → (encoder record, bilm record, config, layers, offset of its numbers)
ENCODERS: dict[str, tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any], int, float]] = {
    "bilm": ({"kind": "bilm", "hash": BILM, "layers": 3, "dim": 256},
             {"name": "shipped", "hash": BILM, "layers": 3, "dim": 256}, {"random_init": None, "random_seed": 0}, 3, 0.0),
    "bilm_random": ({"kind": "bilm", "hash": f"{BILM}-random-all-0", "random_init": "all", "random_seed": 0,
                     "layers": 3, "dim": 256},
                    {"name": "shipped", "hash": f"{BILM}-random-all-0", "layers": 3, "dim": 256},
                    {"random_init": "all", "random_seed": 0}, 3, -20.0),
    "minilm": ({**MINILM, "layers": 7, "dim": 384}, None, {"random_init": None, "random_seed": 0}, 7, 5.0),
    "minilm_random": ({**MINILM, "random_init": "all", "random_seed": 0, "layers": 7, "dim": 384}, None,
                      {"random_init": "all", "random_seed": 0}, 7, -30.0),
}


def _structural_values(offset: float, layer: int) -> dict[str, float]:
    return {"uuas": 40.0 + offset + 3 * layer, "dspr": round(0.5 + offset / 100 + 0.01 * layer, 4),
            "root_acc": 50.0 + offset + layer, "nspr": round(0.6 + offset / 100 + 0.02 * layer, 4)}


def _mdl_values(offset: float, layer: int, probe: str, control: bool) -> dict[str, float]:
    bits = 30000.0 - 100 * offset - 500 * layer + (200.0 if probe == "mlp1" else 0.0) + (9000.0 if control else 0.0)
    return {"online_bits": bits, "uniform_bits": 223476.68, "compression": round(223476.68 / bits, 4),
            "accuracy": 80.0 + offset / 10 + layer - (30.0 if control else 0.0) + (0.5 if probe == "mlp1" else 0.0)}


def _write(path: Path, name: str, task: str, metrics: dict[str, dict[str, float]], config: dict[str, Any]) -> None:
    encoder, bilm, random, _, _ = ENCODERS[name]
    path.mkdir(parents=True)
    RunRecord(task=task, embedder="elmo", seed=0, config={**config, **random}, metrics=metrics,
              data={"name": "ud_ewt" if task == "structural_probe" else "ud_ewt_pos", "fraction": 1.0,
                    "train_sentences": 2000, "punct": "xpos"},
              main_metric="layer_1_uuas" if task == "structural_probe" else "layer_1_compression", mixes={}, elmo=None,
              epochs={"run": 0, "best": None, "history": []}, bilm=bilm, encoder=encoder).write(path / "results.json")


def structural(root: Path, name: str) -> None:
    layers, offset = ENCODERS[name][3], ENCODERS[name][4]
    test = {f"layer_{k}_{m}": v for k in range(layers) for m, v in _structural_values(offset, k).items()}
    dev = {k: v - 1 for k, v in test.items()}
    _write(root / name / "structural", name, "structural_probe",
           {"dev": {**dev, "linear_chain_uuas": 42.97}, "test": {**test, "linear_chain_uuas": 42.99}}, {"punct": "xpos"})


def mdl(root: Path, name: str, probe: str = "linear", control: bool = True) -> None:
    layers, offset = ENCODERS[name][3], ENCODERS[name][4]
    train, test = {}, {}
    for prefix in ("", "control_") if control else ("",):
        for k in range(layers):
            values = _mdl_values(offset, k, probe, bool(prefix))
            train.update({f"{prefix}layer_{k}_{m}": values[m] for m in ("online_bits", "uniform_bits", "compression")})
            test[f"{prefix}layer_{k}_accuracy"] = values["accuracy"]
    _write(root / name / ("mdl" if probe == "linear" else f"mdl_{probe}"), name, "mdl_probe",
           {"train": train, "test": test}, {"probe": probe, "control": control})


def make_tree(root: Path) -> None:
    """Two encoders and a random twin of each: structural and MDL (linear; the biLM also MLP-1), controls coded."""
    for name in ENCODERS:
        structural(root, name)
        mdl(root, name)
    mdl(root, "bilm", "mlp1")


@pytest.fixture
def report(tmp_path):
    from elmo_bench.commands.report import build_report

    make_tree(tmp_path / "runs")
    out = tmp_path / "report"
    build_report([str(tmp_path / "runs")], out, "json", significance=False)
    return json.loads((out / "report.json").read_text()), out


def _rows(table: dict, encoder_prefix: str, weights: str) -> list[dict]:
    return [r for r in table["rows"] if r["encoder"].startswith(encoder_prefix) and r["weights"] == weights]


def test_every_cell_is_the_records_number(report):
    tables = report[0]["tables"]
    table = tables["structural_mdl"]
    blocks = {"bilm": ("ELMo (biLM abcdef01)", "trained"), "bilm_random": ("ELMo (biLM abcdef01)", "random (all, seed 0)"),
              "minilm": ("sentence-transformers/all-MiniLM-L6-v2", "trained"),
              "minilm_random": ("sentence-transformers/all-MiniLM-L6-v2", "random (all, seed 0)")}
    assert [(r["encoder"], r["weights"]) for r in table["rows"]] == [blocks[n] for n in ENCODERS
                                                                   for _ in range(ENCODERS[n][3])]
    for name, (label, weights) in blocks.items():
        layers, offset = ENCODERS[name][3], ENCODERS[name][4]
        rows = _rows(table, label, weights)
        assert [r["layer"] for r in rows] == list(range(layers))
        for k, row in enumerate(rows):
            assert row["relative_depth"] == pytest.approx(k / (layers - 1))
            for metric, value in _structural_values(offset, k).items():
                assert row["test"][metric] == {"mean": value, "std": None, "n": 1}, (name, k, metric)
            for control in (False, True):
                values = _mdl_values(offset, k, "linear", control)
                key = "linear_control_" if control else "linear_"
                assert row["train"][key + "online_bits"]["mean"] == values["online_bits"]
                assert row["train"][key + "compression"]["mean"] == values["compression"]
                assert row["test"][key + "accuracy"]["mean"] == values["accuracy"]
            mlp = row["train"]["mlp1_compression"]
            assert (mlp is None) == (name != "bilm")     # only the trained biLM has an MLP-1 record
            if name == "bilm":
                assert mlp["mean"] == _mdl_values(offset, k, "mlp1", False)["compression"]
                assert row["test"]["mlp1_control_accuracy"]["mean"] == _mdl_values(offset, k, "mlp1", True)["accuracy"]
    assert table["baselines"] == [{"encoder": "baseline: linear chain", "data": "ud_ewt", "punct": "xpos",
                                   "test": {"uuas": {"mean": 42.99, "std": None, "n": 4}}}]
    assert not any("structural" in json.dumps(r) or "mdl" in json.dumps(r) for r in tables["table1"]["rows"])


def test_hewitt_and_mannings_numbers_stand_beside_the_bilm(report):
    table, out = report[0]["tables"]["structural_mdl"], report[1]
    assert table["paper"]["ELMo0"] == {"layer": "layer_0 (ELMo0)", "weights": "trained", "uuas": 26.8, "dspr": 0.44,
                                       "root_acc": 54.3, "nspr": 0.56}
    assert table["paper"]["ELMo1"] == {"layer": "layer_1 (ELMo1)", "weights": "trained", "uuas": 77.0, "dspr": 0.83,
                                       "root_acc": 86.5, "nspr": 0.87}
    assert table["paper"]["Proj0"]["uuas"] == 59.8 and table["paper"]["Proj0"]["root_acc"] == 64.4
    assert (table["paper"]["Proj0"]["dspr"], table["paper"]["Proj0"]["nspr"]) == (0.73, 0.75)
    assert table["paper"]["linear_chain"] == {"uuas": 48.9}
    from elmo_bench.commands.report import build_report

    build_report([str(out.parent / "runs")], out, "md", significance=False)
    lines = (out / "report.md").read_text().splitlines()
    paper = "| paper: ELMo (public 5.5B biLM), Hewitt & Manning 2019, PTB WSJ test | trained | layer_1 (ELMo1) | 77.0 | 0.83 | 86.5 | 0.87 |"
    at = next(i for i, line in enumerate(lines) if line.startswith(paper))
    assert lines[at - 1].startswith("| paper: ELMo (public 5.5B biLM), Hewitt & Manning 2019, PTB WSJ test | trained | "
                                    "layer_0 (ELMo0) | 26.8 | 0.44 | 54.3 | 0.56 |")
    assert lines[at - 2].startswith("| ELMo (biLM abcdef01) | random (all, seed 0) | layer_2 | 26.00 | 0.320 | 32.00 | 0.440 | 31000 | 7.21 | 80.00 |")
    assert lines[at + 1].startswith("| paper: ELMo (public 5.5B biLM), Hewitt & Manning 2019, PTB WSJ test | "
                                    "random BiLSTM over trained layer_0 | Proj0 | 59.8 | 0.73 | 64.4 | 0.75 |")
    assert lines[at + 2].startswith("| paper: linear chain, Hewitt & Manning 2019, PTB WSJ test | — | — | 48.9 |")
    assert lines[at + 3].startswith("| sentence-transformers/all-MiniLM-L6-v2 | trained | layer_0 | 45.00 | 0.550 |")
    header = next(line for line in lines if line.startswith("| Encoder | Weights | Layer | UUAS (test)"))
    assert "| MDL linear control compression (train) |" in header and "| MDL MLP-1 acc. (test) |" in header


def test_depth_figure_written_without_overlaps(tmp_path, monkeypatch):
    from elmo_bench.commands.report import build_report
    from elmo_bench.report import figures
    from tests.test_report_figure_layout import _overlaps

    make_tree(tmp_path / "runs")
    seen: dict[str, Any] = {}
    save = figures._save

    def measuring_save(fig, path):
        overlaps = _overlaps(fig)
        renderer = fig.canvas.get_renderer()
        # the shared legend (below the panels, or in the grid's spare slots: issue 56) covers none of them
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if not ax.axison and ax.get_legend())]
        for legend in legends:
            box = legend.get_window_extent(renderer)
            overlaps += [f"legend over {ax.get_title()!r}" for ax in fig.axes
                         if ax.axison and ax.get_tightbbox(renderer).overlaps(box)]
        seen[Path(path).name] = (overlaps, [ax.get_title() for ax in fig.axes if ax.axison],
                                 [len(ax.get_lines()) for ax in fig.axes if ax.axison], len(legends))
        save(fig, path)

    monkeypatch.setattr(figures, "_save", measuring_save)
    build_report([str(tmp_path / "runs")], tmp_path / "report", "json", significance=False)
    assert (tmp_path / "report" / "structural_mdl_depth.png").stat().st_size > 0
    assert "structural_mdl_depth.png" in json.loads((tmp_path / "report" / "report.json").read_text())["figures"]
    overlaps, titles, lines, legends = seen["structural_mdl_depth.png"]
    assert legends == 1
    assert overlaps == []
    assert titles == ["UUAS (test)", "DSpr (test)", "NSpr (test)", "MDL compression, linear probe (train)",
                      "MDL compression, MLP-1 probe (train)"]
    assert lines == [5, 4, 4, 8, 2]          # a line per encoder × weights (UUAS: and the linear chain, issue 45);
    #                                          MDL: task and control


def test_without_such_records_nothing_changes(tmp_path):
    from elmo_bench.commands.report import build_report

    out = tmp_path / "report"
    build_report([str(tmp_path)], out, "json", significance=False)
    report = json.loads((out / "report.json").read_text())
    assert "structural_mdl" not in report["tables"] and not (out / "structural_mdl_depth.png").exists()
    assert "Structural" not in report["summary"]
