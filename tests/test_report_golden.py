"""`elmo-bench report` on a small hand-made results tree: exact Markdown (golden file), PNGs, warnings."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from elmo_bench.commands.report import build_report, build_reports, report_main
from tests.declared_numbers import write_beside
from tests.report_sections import collect_with_probes as collect

GOLDEN = Path(__file__).resolve().parent / "golden" / "report_small.md"
GOLDEN_JSON = GOLDEN.with_suffix(".json")
TEST_TREES = [f"({label} (2 word{i}) (2 more{i}))" for i, label in enumerate([0, 1, 2, 3, 4] * 4)]   # 20 invented


def result(task, embedder, seed, *, data, test=None, dev=None, main="f1", fraction=1.0, mode="learned",
           placement="input", l2=0.0, layer=None, mix=None, mixes=None, data_cfg=None, history=None):
    """A results.json dict as the engine writes it (only the fields the report reads are meaningful)."""
    elmo = None if embedder == "glove" else {"placement": placement, "l2_coef": l2, "layer_norm": False,
                                             "dropout": 0.5, "mode": mode, "layer_index": layer}
    mix_cfg = {"name": mode, "mode": mode, "placement": None, "lambda": None, "layer_norm": None, "dropout": None}
    mix_cfg.update(mix or {})
    metrics = {}
    if dev is not None:
        metrics["dev"] = {main: dev}
    if test is not None:
        metrics["test"] = {main: test}
    return {"schema": 1, "task": task, "embedder": embedder, "seed": seed,
            "config": {"mix": mix_cfg, "data": data_cfg or {"fraction": fraction}, "task": {"head": {}, "trainer": {}},
                       # fractions below 1 stand for sample-efficiency runs, which scale their epochs
                       "trainer": {"scale_epochs": fraction < 1.0}, "choices": {"data": data}},
            "data": {"name": data, "fraction": fraction}, "metrics": metrics, "main_metric": main,
            "mixes": mixes or {}, "elmo": elmo, "epochs": {"history": history or []}, "timings": {}, "bilm": None,
            "git_commit": None}


def write(root: Path, rel: str, results: dict, predictions: list | None = None, examples: list | None = None) -> None:
    """results.json; with test ``predictions``, what the engine records beside it through the task's own methods
    (predictions in both forms and the per-example statistics the report bootstraps)."""
    (root / rel).mkdir(parents=True, exist_ok=True)
    (root / rel / "results.json").write_text(json.dumps(results))
    if predictions is not None:
        from elmo_bench.engine.experiment import load_task
        from elmo_bench.engine.run_outputs import record_split

        record_split(root / rel, load_task(results["task"]), "test", examples, predictions, results["metrics"]["test"])


def make_tree(root: Path) -> None:
    write_beside(root)   # the tasks' declarations, as export-results leaves them beside the records
    mix3 = {"input": {"weights": [0.2, 0.3, 0.5], "gamma": 1.0}}
    t1 = root / "table1"
    for seed, base, elmo in [(1, 90.0, 92.0), (2, 91.0, 92.5)]:
        curve = [{"epoch": e, "dev": {"f1": base + 1 - 3.0 / (e + 1)}, "train_loss": 1.0} for e in range(4)]
        write(t1, f"ner/glove-seed{seed}", result("ner", "glove", seed, data="conll2003", test=base, dev=base + 1,
                                                  history=curve))
        write(t1, f"ner/glove_elmo-seed{seed}", result("ner", "glove_elmo", seed, data="conll2003", test=elmo,
                                                      dev=elmo + 1, l2=0.1, mixes=mix3,
                                                      history=[{"epoch": e, "dev": elmo + e - 2} for e in range(3)]))
    write(t1, "srl/glove-seed1", result("srl", "glove", 1, data="conll2005", test=80.0, dev=81.0))
    # SST with predictions on an invented test file: baseline right on 10 of 20, +ELMo on 18 of 20
    sst_test = root / "sst_test.txt"
    sst_test.write_text("\n".join(TEST_TREES) + "\n")
    from elmo_bench.tasks.sst.reader import read_splits

    examples = read_splits({"source": "local", "test": str(sst_test)})["test"]
    gold = [e["label"] for e in examples]
    base_pred = [g if i < 10 else (g + 1) % 5 for i, g in enumerate(gold)]
    elmo_pred = [g if i < 18 else (g + 1) % 5 for i, g in enumerate(gold)]
    sst_cfg = {"source": "local", "train": "unused", "dev": "unused", "test": str(sst_test), "fraction": 1.0}
    write(t1, "sst/glove-seed1", result("sst", "glove", 1, data="sst", test=50.0, main="accuracy", data_cfg=sst_cfg),
          base_pred, examples)
    write(t1, "sst/glove_elmo-seed1", result("sst", "glove_elmo", 1, data="sst", test=90.0, main="accuracy",
                                             placement="both", l2=0.001, data_cfg=sst_cfg,
                                             mixes={"input": {"weights": [0.1, 0.6, 0.3]},
                                                    "output": {"weights": [0.5, 0.25, 0.25]}}),
          elmo_pred, examples)
    # the same NER baseline run again under another sweep: counted once
    write(root / "table2", "ner/glove-seed1", result("ner", "glove", 1, data="conll2003", test=90.0, dev=91.0))
    t2 = root / "table2"
    write(t2, "srl/glove_elmo-seed1/variant=last_only", result("srl", "glove_elmo", 1, data="conll2005", dev=83.0,
                                                                mode="top", mix={"name": "top"}))
    write(t2, "srl/glove_elmo-seed1/variant=lambda_1", result("srl", "glove_elmo", 1, data="conll2005", dev=84.0,
                                                               l2=1.0, mix={"lambda": 1.0}))
    write(t2, "srl/glove_elmo-seed2/variant=lambda_1", result("srl", "glove_elmo", 2, data="conll2005", dev=84.5,
                                                               l2=1.0, mix={"lambda": 1.0}))
    t3 = root / "table3"
    write(t3, "snli/glove_elmo-seed1/mix.placement=output", result(
        "snli", "glove_elmo", 1, data="snli_sandbox", dev=85.0, main="accuracy", placement="output", l2=0.001,
        mix={"placement": "output"}))
    write(t3, "snli/glove_elmo-seed1/mix.placement=input", result(
        "snli", "glove_elmo", 1, data="snli_sandbox", dev=86.0, main="accuracy", placement="input", l2=0.001,
        mix={"placement": "input"}))
    pos = root / "probe_pos"
    for k, acc in enumerate([90.0, 96.5, 95.75]):
        write(pos, f"pos/elmo-seed1/probe=layer_{k}", result("pos", "elmo", 1, data="ud_ewt_pos", test=acc,
                                                             main="accuracy", mode="layer", layer=k))
    write(pos, "pos/elmo-seed1/probe=learned", result("pos", "elmo", 1, data="ud_ewt_pos", test=97.0,
                                                      main="accuracy"))
    (root / "probe_wsd" / "wsd").mkdir(parents=True)
    (root / "probe_wsd" / "wsd" / "results.json").write_text(json.dumps({"task": "wsd", "metrics": {
        "ALL": {"layer_0_f1": 60.0, "layer_1_f1": 66.0, "layer_2_f1": 68.5, "average_f1": 67.0, "mfs_f1": 64.0,
                "wordnet_first_sense_f1": 65.25},
        "senseval2": {"layer_0_f1": 61.0, "layer_1_f1": 67.0, "layer_2_f1": 69.0, "average_f1": 68.0}},
        "data": {"coverage": {"ALL": {"layer_0": [7250, 7253], "wordnet_first_sense": [7253, 7253]}}}}))
    probe = result("pos_probe", "elmo", 0, data="ud_ewt_pos", main="layer_1_accuracy")
    probe["elmo"] = None
    probe["data"].update({"train_sentences": 4000, "all_train_sentences": None})
    probe["metrics"] = {"test": {"layer_0_accuracy": 80.5, "layer_1_accuracy": 88.25, "layer_2_accuracy": 87.0,
                                 "average_accuracy": 88.0, "glove_accuracy": 84.0,
                                 "most_frequent_tag_accuracy": 79.75}}
    write(root / "probe_pos_converged", "ewt4000", probe)
    (root / "adapted" / "ner").mkdir(parents=True)
    (root / "adapted" / "ner" / "lm_adaptation.json").write_text(json.dumps({
        "schema": "elmo_bench.lm_adaptation/1", "task": "ner", "data": "conll2003", "text": "dev", "tokens": 51362,
        "before": {"forward": 560.0, "backward": 546.8, "average": 553.4},
        "after": {"forward": 230.0, "backward": 226.6, "average": 228.3}, "base_bilm": "a", "adapted_bilm": "b"}))
    se = root / "sample_efficiency"
    for fraction, base, elmo in [(0.01, 40.0, 60.0), (0.1, 70.0, 80.0)]:
        for seed, delta in [(1, 0.0), (2, 2.0)]:
            write(se, f"ner/glove-seed{seed}/data.fraction={fraction}", result(
                "ner", "glove", seed, data="conll2003", test=base + delta, fraction=fraction))
            write(se, f"ner/glove_elmo-seed{seed}/data.fraction={fraction}", result(
                "ner", "glove_elmo", seed, data="conll2003", test=elmo + delta, fraction=fraction, l2=0.1))
    (root / "broken").mkdir()
    (root / "broken" / "results.json").write_text("{not json")


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    make_tree(root)
    out = root / "report"
    assert report_main([str(root), "--out", str(out), "--bootstrap-samples", "2000"]) == 0
    return root, out


def test_report_matches_golden(report_dir):
    _, out = report_dir
    text = (out / "report.md").read_text()
    if not GOLDEN.exists():                                   # regenerate: delete the file, run, review the diff
        GOLDEN.write_text(text)
        pytest.fail(f"{GOLDEN} was missing and has been written: review it and run again")
    assert text == GOLDEN.read_text()


def test_json_report_matches_golden(report_dir, tmp_path):
    root, _ = report_dir
    assert report_main([str(root), "--out", str(tmp_path), "--format", "json", "--bootstrap-samples", "2000"]) == 0
    text = (tmp_path / "report.json").read_text()
    if not GOLDEN_JSON.exists():
        GOLDEN_JSON.write_text(text)
        pytest.fail(f"{GOLDEN_JSON} was missing and has been written: review it and run again")
    assert text == GOLDEN_JSON.read_text()
    report = json.loads(text)
    rows = report["tables"]["table1"]["rows"]
    assert all(set(row) == {"task", "data", "metric", "baseline", "elmo", "p"} for row in rows)
    ner = next(r for r in rows if r["task"] == "ner")
    assert ner["baseline"] == {"mean": 90.5, "std": pytest.approx(0.5 ** 0.5), "n": 2}
    assert ner["elmo"]["mean"] == pytest.approx(92.25) and ner["p"] is None        # no predictions: no p-value
    sst = next(r for r in rows if r["task"] == "sst")
    assert sst["p"] is not None and sst["p"] < 0.01 and sst["elmo"] == {"mean": 90.0, "std": None, "n": 1}
    assert report["tables"]["table1"]["paper"]["snli"]["elmo_std"] == 0.17
    assert report["tables"]["table7"]["rows"][1]["after"] == 228.3
    # Table 2's seed counts: one seed in baseline and last-only, two under lambda 1 (hence its ±), none at 0.001
    srl = next(r for r in report["tables"]["table2"]["rows"] if r["Task"] == "srl")
    assert srl["n"] == "1/1/2/0" and srl["All, λ=1"] == "84.25 ± 0.35"


def test_several_formats_from_one_build_equal_each_built_alone(report_dir, tmp_path):
    """build_reports reads, bootstraps and draws once for all formats: each file and figure is what its own
    build gives (the md one is also the golden file)."""
    root, out = report_dir
    paths = build_reports([str(root)], tmp_path / "all", ["json", "md", "latex"], samples=2000)
    assert [p.name for p in paths] == ["report.json", "report.md", "report.tex"]
    for fmt, name in (("json", "report.json"), ("md", "report.md"), ("latex", "report.tex")):
        alone = build_report([str(root)], tmp_path / fmt, fmt, samples=2000)
        assert (tmp_path / "all" / name).read_text() == alone.read_text(), fmt
    assert (tmp_path / "all" / "report.md").read_text() == (out / "report.md").read_text()
    assert sorted(p.name for p in (tmp_path / "all").glob("*.png")) == sorted(p.name for p in out.glob("*.png"))


def test_figures_are_nonempty_pngs(report_dir):
    _, out = report_dir
    for name in ("figure1_sample_efficiency.png", "figure2_layer_weights.png", "dev_curves.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_unreadable_file_warns_and_duplicates_count_once(report_dir, capsys):
    root, _ = report_dir
    found = collect([root / "table1", root / "table2", root / "broken"])
    assert any("broken" in w and "unreadable" in w for w in found.warnings)
    assert found.duplicates == 1
    assert sum(r.task == "ner" and r.embedder == "glove" and r.seed == 1 for r in found.runs) == 1


def test_latex_format(report_dir, tmp_path):
    root, _ = report_dir
    assert report_main([str(root / "table1"), "--format", "latex", "--out", str(tmp_path), "--no-bootstrap"]) == 0
    tex = (tmp_path / "report.tex").read_text()
    assert r"\begin{tabular}" in tex and r"92.25 $\pm$ 0.35" in tex and "ner" in tex
    assert (tmp_path / "figure2_layer_weights.png").exists()
    assert not (tmp_path / "figure1_sample_efficiency.png").exists()     # no fractions below 1 in table1


def test_empty_dir_gives_all_missing_cells(tmp_path):
    # the rendering of an empty collection (build_report); the report command refuses one (tests/test_failure_modes.py);
    # the paper's columns come from the tasks' declarations beside the (absent) records
    write_beside(tmp_path)
    assert build_report([str(tmp_path)], tmp_path / "r") == tmp_path / "r" / "report.md"
    text = (tmp_path / "r" / "report.md").read_text()
    assert "| squad | — | — | — | — | — | — | 0/0 | 84.40 | 81.10 | 85.80 | +4.70 / 24.9% | — |" in text
    assert "| snli | — | — | — | — | — | — | 0/0 | 88.60 | 88.00 | 88.70 ± 0.17 | +0.70 / 5.8% | — |" in text
    assert " 0.00 " not in text
    shutil.rmtree(tmp_path / "r")
