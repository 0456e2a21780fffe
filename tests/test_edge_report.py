"""The report's edge-probing table (issue 38 item 4): lexical / full / gain / best layer / expected layer / centre
of gravity per encoder and task, from results.json records only; no table without edge runs."""
from __future__ import annotations

import json

import pytest

from elmo_bench.commands.report import build_report
from tests.test_report_golden import result, write

BILM = {"name": "shipped", "hash": "730677ca6e2ce40a", "layers": 3, "dim": 256}


def edge(seed, mode, layer, dev, test, weights=None):
    mixes = {"input": {"weights": weights, "gamma": 1.0}} if weights else None
    out = result("edge_ner", "elmo", seed, data="conll2003_edge", dev=dev, test=test, mode=mode, layer=layer,
                 mixes=mixes, mix={"layer": layer})
    return {**out, "bilm": BILM}


def test_edge_rows_from_the_records(tmp_path):
    root = tmp_path / "results"
    write(root, "l0-s1", edge(1, "layer", 0, 70.0, 69.0))
    write(root, "l1-s1", edge(1, "layer", 1, 84.0, 83.0))
    write(root, "l2-s1", edge(1, "layer", 2, 84.0, 82.0))
    write(root, "c1-s1", edge(1, "cumulative", 1, 82.0, 81.0))
    write(root, "full-s1", edge(1, "learned", None, 86.0, 85.0, [0.1, 0.6, 0.3]))
    write(root, "l0-s2", edge(2, "layer", 0, 72.0, 71.0))
    write(root, "full-s2", edge(2, "learned", None, 85.0, 87.0, [0.2, 0.4, 0.4]))
    report = json.loads(build_report([str(root)], tmp_path / "out", fmt="json", significance=False).read_text())
    rows = report["tables"]["edge_probing"]["rows"]
    assert len(rows) == 1
    row = rows[0]
    assert row["task"] == "edge_ner" and row["layers"] == 3
    assert row["lexical"]["mean"] == pytest.approx(70.0) and row["lexical"]["n"] == 2
    assert row["full"]["mean"] == pytest.approx(86.0) and row["gain"]["mean"] == pytest.approx(16.0)
    assert row["best_layer"] == 1                                    # dev 84 = 84: the lower layer
    assert row["deltas"] == {"1": pytest.approx([12.0, 4.0])}        # seed 2 has no cumulative 1
    assert row["expected_layer"]["mean"] == pytest.approx((12 + 8) / 16) and row["expected_layer"]["n"] == 1
    assert row["centre_of_gravity"]["mean"] == pytest.approx((1.2 + 1.2) / 2)
    assert row["weights"] == pytest.approx([0.15, 0.5, 0.35])
    for table in ("table1", "figure2", "budget", "dev_curves"):              # the paper's tables never see them
        assert "edge_ner" not in json.dumps(report["tables"][table]), table
    assert "edge_pipeline.png" in report["figures"] and (tmp_path / "out" / "edge_pipeline.png").stat().st_size > 0
    markdown = build_report([str(root)], tmp_path / "md", fmt="md", significance=False).read_text()
    assert "![Edge probing by relative depth](edge_pipeline.png)" in markdown and "| edge_ner |" in markdown


def test_no_edge_runs_no_table(tmp_path):
    root = tmp_path / "results"
    write(root, "ner", {**result("ner", "glove_elmo", 1, data="conll2003", test=90.0), "bilm": BILM})
    report = json.loads(build_report([str(root)], tmp_path / "out", fmt="json", significance=False).read_text())
    assert "edge_probing" not in report["tables"] and not (tmp_path / "out" / "edge_pipeline.png").exists()
