"""Encoders side by side in the report (issue 29 item 6): a results tree with biLM and Hugging Face (transformers)
runs gives Table 1 / the sample-efficiency data / Tables 5-6 one row block per encoder and a probe-depth figure with
a line per encoder; runs of two encoders are never merged; with the biLM alone nothing changes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from elmo_bench.commands.report import build_report, build_reports, report_main
from elmo_bench.records.run_record import RunRecord
from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.probe_depth import probe_depth_curves
from elmo_bench.report.run_tables import figure1_table
from elmo_bench.report.table import MISSING
from elmo_bench.report.tables import table1
from tests.declared_numbers import numbers
from tests.report_sections import collect_with_probes as collect
from tests.report_sections import plugins, probe_report

table5, WSD = probe_report("wsd").table5, probe_report("wsd").WSD
table6, POS_CONVERGED = probe_report("pos").table6, probe_report("pos").POS_CONVERGED
from tests.test_report_golden import result, write

REPO = Path(__file__).resolve().parents[1]
BILM_HASH = "730677ca6e2ce40a"
BILM = {"name": "shipped", "hash": BILM_HASH, "layers": 3, "dim": 256}
BERT = {"kind": "transformers", "model": "bert-tiny", "revision": None, "hash": "d1", "pooling": "first",
        "window": 512, "precision": "fp32", "model_type": "bert", "layers": 5, "dim": 32}
BERT_MEAN = {**BERT, "pooling": "mean"}
BILM_LABEL, BERT_LABEL, BERT_MEAN_LABEL = "ELMo (biLM 730677ca)", "bert-tiny", "bert-tiny (mean pooling)"


def with_encoder(results: dict, encoder: dict | None) -> dict:
    """A results.json of the biLM as written before encoders existed (``bilm``, no ``encoder`` key) when ``encoder``
    is None, else of another encoder kind (``bilm`` null, ``encoder`` its identity + layers + dim)."""
    if encoder is None:
        return {**results, "bilm": BILM}
    return {**results, "bilm": None, "encoder": encoder}


def probe_records(encoder: dict | None, layers: list[float]) -> tuple[dict, dict]:
    """(WSD probe, converged POS probe) results.json of one encoder: layer k scores ``layers[k]`` (WSD) and
    ``layers[k] + 20`` (POS)."""
    wsd = {"task": "wsd", "metrics": {"ALL": {f"layer_{k}_f1": v for k, v in enumerate(layers)},
                                      "senseval2": {f"layer_{k}_f1": v - 1 for k, v in enumerate(layers)}}}
    wsd = {**wsd, "bilm": BILM} if encoder is None else {**wsd, "encoder": encoder}
    pos = result("pos_probe", "elmo", 0, data="ud_ewt_pos", main="layer_1_accuracy")
    pos["elmo"] = None
    pos["metrics"] = {"test": {**{f"layer_{k}_accuracy": v + 20 for k, v in enumerate(layers)},
                               "average_accuracy": 85.0, "glove_accuracy": 80.0, "most_frequent_tag_accuracy": 75.0}}
    return wsd, with_encoder(pos, encoder)


def make_tree(root: Path) -> None:
    for seed, base, bilm, bert in [(1, 90.0, 92.0, 94.0), (2, 91.0, 92.5, 95.0)]:
        write(root, f"ner/glove-seed{seed}", result("ner", "glove", seed, data="conll2003", test=base))
        write(root, f"ner/glove_elmo-seed{seed}", with_encoder(
            result("ner", "glove_elmo", seed, data="conll2003", test=bilm, l2=0.1), None))
        write(root, f"ner/glove_elmo-seed{seed}/encoder=transformers", with_encoder(
            result("ner", "glove_elmo", seed, data="conll2003", test=bert, l2=0.1), BERT))
    # the same run but mean pooling: another encoder, never merged with the first (nor dropped as its duplicate)
    write(root, "ner/glove_elmo-seed1/encoder=transformers,pooling=mean", with_encoder(
        result("ner", "glove_elmo", 1, data="conll2003", test=93.0, l2=0.1), BERT_MEAN))
    write(root, "sst/glove-seed1", result("sst", "glove", 1, data="sst", test=50.0, main="accuracy"))
    for fraction, base, bilm, bert in [(0.01, 40.0, 60.0, 70.0), (0.1, 70.0, 80.0, 85.0)]:
        write(root, f"se/ner/glove/{fraction}", result("ner", "glove", 1, data="conll2003", test=base,
                                                       fraction=fraction))
        write(root, f"se/ner/bilm/{fraction}", with_encoder(
            result("ner", "glove_elmo", 1, data="conll2003", test=bilm, fraction=fraction, l2=0.1), None))
        write(root, f"se/ner/bert/{fraction}", with_encoder(
            result("ner", "glove_elmo", 1, data="conll2003", test=bert, fraction=fraction, l2=0.1), BERT))
    # Table 2 variants: the biLM's last-only run is the reference encoder's; BERT's must not fill the same cell
    write(root, "srl/glove_elmo-seed1/top", with_encoder(result("srl", "glove_elmo", 1, data="conll2005", dev=83.0,
                                                                mode="top", mix={"name": "top"}), None))
    write(root, "srl/glove_elmo-seed1/top-bert", with_encoder(
        result("srl", "glove_elmo", 1, data="conll2005", dev=88.0, mode="top", mix={"name": "top"}), BERT))
    for name, encoder, layers in [("bilm", None, [60.0, 66.0, 68.5]), ("bert", BERT, [55.0, 62.0, 70.0, 71.0, 64.0])]:
        wsd, pos = probe_records(encoder, layers)
        write(root, f"probe_wsd/{name}", wsd)
        write(root, f"probe_pos/{name}", pos)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("encoders")
    make_tree(root)
    return root, collect([root]).runs


def test_two_encoders_are_never_merged_and_labels_name_them(tree):
    root, runs = tree
    found = collect([root])
    assert found.duplicates == 0 and len(found.runs) == found.files        # mean pooling is no duplicate of first
    names = EncoderNames(runs)
    assert [names.labels[k] for k in names.order] == [BILM_LABEL, BERT_LABEL, BERT_MEAN_LABEL]
    assert names.several(runs) and names.label(names.reference(runs)) == BILM_LABEL


def test_table1_has_a_row_per_encoder_with_the_papers_columns_on_the_bilm_row(tree):
    _, runs = tree
    table = table1(runs, numbers=numbers())
    assert table.header[:6] == ["Task", "Data", "Encoder", "Metric", "Baseline", "+encoder"]
    ner = {r[2]: r for r in table.rows if r[0] == "ner"}
    assert list(ner) == [BILM_LABEL, BERT_LABEL, BERT_MEAN_LABEL]
    assert all(r[4] == "90.50 ± 0.71" for r in ner.values())                    # one shared GloVe baseline
    assert ner[BILM_LABEL][5] == "92.25 ± 0.35" and ner[BILM_LABEL][8] == "2/2"
    assert ner[BERT_LABEL][5] == "94.50 ± 0.71" and ner[BERT_LABEL][6] == "+4.00"
    assert ner[BERT_MEAN_LABEL][5] == "93.00" and ner[BERT_MEAN_LABEL][8] == "2/1"
    assert ner[BILM_LABEL][9:12] == ["91.93 ± 0.19", "90.15", "92.22 ± 0.10"]   # the paper's numbers: biLM only
    assert ner[BERT_LABEL][9:13] == [MISSING] * 4
    sst = [r for r in table.rows if r[0] == "sst"]
    assert len(sst) == 1 and sst[0][2] == MISSING and sst[0][11] == "54.70 ± 0.5"   # baseline only: one row
    records = [r for r in table.records if r["task"] == "ner"]
    assert [r["encoder"] for r in records] == [BILM_LABEL, BERT_LABEL, BERT_MEAN_LABEL]
    assert records[1]["elmo"] == {"mean": 94.5, "std": pytest.approx(0.5 ** 0.5), "n": 2}


def test_sample_efficiency_table_has_an_encoder_column(tree):
    _, runs = tree
    table = figure1_table(runs)
    assert table.header == ["Task", "Data", "Embedder", "Encoder", "Training data", "Metric", "n"]
    cells = {(r[2], r[3], r[4]): r[5] for r in table.rows}
    assert cells[("glove", MISSING, "1%")] == "40.00"
    assert cells[("glove_elmo", BILM_LABEL, "1%")] == "60.00" and cells[("glove_elmo", BERT_LABEL, "10%")] == "85.00"


def test_tables_5_and_6_have_one_block_per_encoder(tree):
    _, runs = tree
    t5 = table5(runs)
    assert t5.header[:7] == ["Encoder", "Set", "layer 0", "layer 1", "layer 2", "layer 3", "layer 4"]
    rows = {(r[0], r[1]): r for r in t5.rows}
    assert rows[(BILM_LABEL, "ALL")][2:7] == ["60.00", "66.00", "68.50", MISSING, MISSING]
    assert rows[(BERT_LABEL, "ALL")][2:7] == ["55.00", "62.00", "70.00", "71.00", "64.00"]
    assert [r[0] for r in t5.rows][:4] == [BILM_LABEL, BILM_LABEL, BERT_LABEL, BERT_LABEL]
    assert rows[("paper", "paper biLM (ALL)")][3:5] == ["67.4", "69.0"]
    t6 = table6(runs)
    assert t6.header[:3] == ["Encoder", "Data", "layer 0"]
    blocks = {r[0]: r for r in t6.rows if r[0] != "paper"}
    assert blocks[BILM_LABEL][2:5] == ["80.00", "86.00", "88.50"] and blocks[BILM_LABEL][5] == MISSING
    assert blocks[BERT_LABEL][2:7] == ["75.00", "82.00", "90.00", "91.00", "84.00"]


def test_probe_depth_curves_put_every_encoder_on_one_relative_depth_axis(tree):
    _, runs = tree
    curves = probe_depth_curves(runs, None, plugins())
    wsd = curves[(WSD, "ALL")]                          # ALL only, not every Senseval set
    assert set(curves) == {(WSD, "ALL"), (POS_CONVERGED, "ud_ewt_pos")}
    assert [(p.depth, p.value.mean) for p in wsd[BILM_LABEL]] == [(0.0, 60.0), (0.5, 66.0), (1.0, 68.5)]
    assert [(p.depth, p.value.mean) for p in wsd[BERT_LABEL]] == [(0.0, 55.0), (0.25, 62.0), (0.5, 70.0),
                                                                   (0.75, 71.0), (1.0, 64.0)]
    assert [p.value.mean for p in curves[(POS_CONVERGED, "ud_ewt_pos")][BERT_LABEL]] == [75.0, 82.0, 90.0, 91.0, 84.0]


def test_report_json_and_md_show_the_encoders_and_the_figure(tree, tmp_path):
    root, _ = tree
    assert report_main([str(root), "--out", str(tmp_path), "--format", "json", "--no-bootstrap"]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert [e["label"] for e in report["encoders"]] == [BILM_LABEL, BERT_LABEL, BERT_MEAN_LABEL]
    assert report["encoders"][1]["identity"]["model"] == "bert-tiny" and report["encoders"][1]["layers"] == 5
    assert report["reference_encoder"] == BILM_LABEL
    assert {"probe_depth.png", "figure1_sample_efficiency.png"} <= set(report["figures"])
    depth = report["tables"]["probe_depth"]["rows"]
    assert {"probe": WSD, "data": "ALL", "encoder": BERT_LABEL, "layer": 1, "layers": 5, "depth": 0.25,
            "value": {"mean": 62.0, "std": None, "n": 1}} in depth
    png = (tmp_path / "probe_depth.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    srl = next(r for r in report["tables"]["table2"]["rows"] if r["Task"] == "srl")
    assert srl["Last only"] == "83.00"                       # the reference encoder's run, not BERT's 88.00
    assert build_report([str(root)], tmp_path / "md", significance=False).name == "report.md"
    text = (tmp_path / "md" / "report.md").read_text()
    assert "![Probe accuracy by relative layer depth](probe_depth.png)" in text and f"Encoders: {BILM_LABEL};" in text


def test_a_single_bilm_report_has_no_encoder_layout(tmp_path):
    root = tmp_path / "r"
    wsd, pos = probe_records(None, [60.0, 66.0, 68.5])
    write(root, "wsd", wsd)
    write(root, "pos", pos)
    write(root, "ner/glove_elmo", with_encoder(result("ner", "glove_elmo", 1, data="conll2003", test=92.0), None))
    # the same biLM as recorded since encoders exist (``encoder`` beside ``bilm``), and a bilm=adapted run of it
    new = with_encoder(result("ner", "glove_elmo", 2, data="conll2003", test=92.5), None)
    write(root, "ner/glove_elmo2", {**new, "encoder": {"kind": "bilm", "hash": BILM_HASH, "layers": 3, "dim": 256}})
    adapted = with_encoder(result("ner", "glove_elmo", 1, data="conll2003", test=93.0), None)
    adapted["bilm"] = {**BILM, "hash": "ad", "adapted_hash": "ad", "base_hash": BILM_HASH}
    adapted["encoder"] = {"kind": "bilm", "hash": "ad", "layers": 3, "dim": 256}
    write(root, "ner/adapted", adapted)
    runs = collect([root]).runs
    assert len({r.encoder_key for r in runs}) == 1 and not EncoderNames(runs).several(runs)
    assert probe_depth_curves(runs, None, plugins()) == {}
    assert table1(runs).header[2] == "Metric" and table5(runs).header[0] == "Set"
    assert report_main([str(root), "--out", str(tmp_path / "out"), "--format", "json", "--no-bootstrap"]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert "encoders" not in report and "probe_depth" not in report["tables"]
    assert not (tmp_path / "out" / "probe_depth.png").exists()


def test_labels_that_would_collide_get_the_identitys_hash():
    def run(encoder: dict) -> Run:
        record = RunRecord(task="ner", metrics={}, encoder=encoder)
        return Run(path=Path("/x"), task="ner", embedder="glove_elmo", seed=1, data="d", fraction=1.0,
                   main_metric="f1", metrics={}, elmo={"mode": "learned"}, record=record)

    runs = [run(BERT), run({**BERT, "hash": "d2"}), run(dict(BERT))]      # two encoders, one of them twice
    names = EncoderNames(runs)
    labels = [names.labels[k] for k in names.order]
    assert len(set(labels)) == 2 and all(label.startswith("bert-tiny [") for label in labels)


def test_dtype_autocast_and_erased_encoders_are_named_in_words():
    """Issue 56: bf16 / fp16 weights, an autocast run and erased or random-control runs of one model were told apart
    by the identity's hash alone ("bert-tiny [1a2b3c4d]"); their labels now say what differs."""
    def run(encoder: dict) -> Run:
        record = RunRecord(task="pos_probe", metrics={}, encoder=encoder)
        return Run(path=Path("/x"), task="pos_probe", embedder="elmo", seed=0, data="d", fraction=1.0,
                   main_metric="accuracy", metrics={}, elmo=None, record=record, probe_task=True)

    erase = {"concept": "upos", "layer": 3, "control": "none", "eraser": "ab"}
    variants = [BERT, {**BERT, "dtype": "float32"}, {**BERT, "dtype": "bfloat16", "precision": "bf16"},
                {**BERT, "dtype": "float16", "precision": "fp16"}, {**BERT, "precision": "fp16"},
                {**BERT, "erase": erase}, {**BERT, "erase": {**erase, "control": "random", "seed": 2}},
                {**BERT_MEAN, "erase": {**erase, "control": "orth", "seed": 1}}]
    names = EncoderNames([run(v) for v in variants])
    assert sorted(names.labels[k] for k in names.order) == sorted([
        "bert-tiny", "bert-tiny (bfloat16 weights)", "bert-tiny (float16 weights)", "bert-tiny (fp16 autocast)",
        "bert-tiny (erased UPOS at layer 3)", "bert-tiny (random control for UPOS at layer 3, seed 2)",
        "bert-tiny (mean pooling, orth control for UPOS at layer 3, seed 1)"])       # float32 is the plain model


def test_the_committed_report_rebuilds_from_the_committed_results(tmp_path):
    """docs/report is `elmo-bench report docs/results` (biLM runs only): the encoder layout must not touch it."""
    results, committed = REPO / "docs" / "results", REPO / "docs" / "report"
    if not results.is_dir():
        pytest.skip("docs/results not present")
    build_reports([str(results)], tmp_path, ["json", "md"])  # one reading, bootstrap and drawing for both
    for name in ("report.json", "report.md"):
        assert (tmp_path / name).read_text() == (committed / name).read_text(), name
    assert sorted(p.name for p in tmp_path.glob("*.png")) == sorted(p.name for p in committed.glob("*.png"))


def test_the_committed_checkpoint_series_report_rebuilds_from_its_records(tmp_path):
    """docs/checkpoint_series/report is `elmo-bench report docs/checkpoint_series/results` (issue 57 item 4: a biLM
    pretrained here, probed at each of its 8 checkpoints; kept apart from docs/results so the paper's tables stay the
    shipped biLM's): the by-training-step section and figure rebuild from the records alone."""
    series = REPO / "docs" / "checkpoint_series"
    if not (series / "results").is_dir():
        pytest.skip("docs/checkpoint_series not present")
    build_reports([str(series / "results")], tmp_path, ["json", "md"])
    for name in ("report.json", "report.md"):
        assert (tmp_path / name).read_text() == (series / "report" / name).read_text(), name
    assert "## Probes by training step" in (tmp_path / "report.md").read_text()
    assert sorted(p.name for p in tmp_path.glob("*.png")) == sorted(p.name for p in (series / "report").glob("*.png"))
