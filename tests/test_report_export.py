"""``elmo-bench export-results``: a compact copy (results.json, gzipped labels keyed by example index, per-example
statistics) from which ``elmo-bench report`` rebuilds exactly the report of the full tree, without the data."""
from __future__ import annotations

import gzip
import json
import shutil

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.commands.main import main
from elmo_bench.report.export import export_results
from tests.report_sections import plugins
from tests.test_report_golden import make_tree


def _files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def tree(tmp_path):
    make_tree(tmp_path / "results")
    shutil.rmtree(tmp_path / "results" / "broken")
    return tmp_path


def test_compact_tree_rebuilds_the_report_without_the_data(tree, capsys):
    src, dst = tree / "results", tree / "docs" / "results"
    for fmt in ("md", "json"):
        assert main(["report", str(src), "--out", str(tree / "full"), "--format", fmt]) == 0
    assert main(["export-results", str(src), str(dst)]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["runs"] == 27
    (src / "sst_test.txt").unlink()                  # the gold test data is gone: only the compact tree remains
    for fmt in ("md", "json"):
        assert main(["report", str(dst), "--out", str(tree / "compact"), "--format", fmt]) == 0
    for name in ("report.md", "report.json", "figure1_sample_efficiency.png", "figure2_layer_weights.png",
                 "dev_curves.png"):
        assert (tree / "compact" / name).read_bytes() == (tree / "full" / name).read_bytes(), name
    assert "| sst | sst | accuracy | 50.00 | 90.00 |" in (tree / "compact" / "report.md").read_text()
    assert json.loads((tree / "compact" / "report.json").read_text())["tables"]["table1"]["rows"][5]["p"] < 0.01


def test_compact_files_hold_labels_by_index_and_statistics(tree):
    src, dst = tree / "results", tree / "compact"
    count, warnings = export_results(src, dst, minimal=plugins().minimal)
    assert count == 27 and warnings == []
    run = dst / "table1" / "sst" / "glove_elmo-seed1"
    assert sorted(p.name for p in run.iterdir()) == ["predictions_test.json.gz", "results.json", "scores_test.json.gz"]
    predictions = json.loads(gzip.decompress((run / "predictions_test.json.gz").read_bytes()))
    original = json.loads((src / "table1" / "sst" / "glove_elmo-seed1" / "predictions_test.json").read_text())
    assert [p["index"] for p in predictions] == list(range(20))
    assert [p["prediction"] for p in predictions] == [r["prediction"] for r in original]
    scores = json.loads(gzip.decompress((run / "scores_test.json.gz").read_bytes()))
    assert scores["kind"] == "ratio" and sum(r[0] for r in scores["rows"]) == 18 and len(scores["rows"]) == 20
    assert json.loads((run / "results.json").read_text()) == json.loads(
        (src / "table1" / "sst" / "glove_elmo-seed1" / "results.json").read_text())
    assert (dst / "adapted" / "ner" / "lm_adaptation.json").exists()
    before = _files(dst)
    export_results(src, dst, minimal=plugins().minimal)   # deterministic: the same bytes again
    assert _files(dst) == before


def test_export_refuses_bad_trees(tmp_path):
    with pytest.raises(DataError, match="not a directory"):
        export_results(tmp_path / "absent", tmp_path / "out")
    (tmp_path / "r").mkdir()
    with pytest.raises(DataError, match="must not lie inside"):
        export_results(tmp_path / "r", tmp_path / "r" / "compact")


def test_task_defaults_make_runs_of_a_replaced_default_an_ablation_arm(tmp_path):
    """A run of the old default (dropout 0.2) and one of the new (trained as mix.dropout=0.5): with the exported
    task defaults saying 0.5, Table 1 takes the 0.5 run; without them, each run's own record decides."""
    from elmo_bench.report.directions import directions_table
    from elmo_bench.report.task_defaults import FILENAME
    from tests.report_sections import collect_with_probes as collect

    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "squad.yaml").write_text("name: squad\nelmo:\n  placement: both\n  dropout: 0.5\n")
    src = tmp_path / "results"

    def write_run(name, embedder, test, dropout=None, mix_dropout=None):
        elmo = None if dropout is None else {"mode": "learned", "placement": "both", "l2_coef": 0.0,
                                             "layer_norm": False, "gamma_init": 1.0, "dropout": dropout}
        results = {"task": "squad", "embedder": embedder, "seed": 1, "main_metric": "f1", "schema": 1,
                   "metrics": {"test": {"f1": test}, "dev": {"f1": test}}, "elmo": elmo, "data": {"name": "sq"},
                   "config": {"mix": {"mode": "learned", "dropout": mix_dropout},
                              "task": {"elmo": {"placement": "both", "dropout": 0.2}}},
                   "epochs": {}, "timings": {}, "bilm": None, "mixes": {}, "git_commit": None}
        (src / name).mkdir(parents=True)
        (src / name / "results.json").write_text(json.dumps(results))

    write_run("glove", "glove", 50.0)
    write_run("elmo_old_default", "glove_elmo", 40.0, dropout=0.2)
    write_run("elmo_dropout_0.5", "glove_elmo", 45.0, dropout=0.5, mix_dropout=0.5)

    def squad_row(root):
        found = collect([root])
        return next(r for r in directions_table(found.runs).records if r.get("task") == "squad")

    assert squad_row(src)["ours"] == "50.00 → 40.00"               # each run's own record: 0.2 is the default
    dst = tmp_path / "compact"
    export_results(src, dst, conf, minimal=plugins().minimal)
    assert json.loads((dst / FILENAME).read_text())["tasks"]["squad"] == {
        "placement": "both", "lambda": 0.0, "layer_norm": False, "gamma_init": 1.0, "dropout": 0.5}
    assert squad_row(dst)["ours"] == "50.00 → 45.00"               # today's default: the 0.5 run
    generated = collect(r for r in [dst])                          # dirs may be any iterable, read once
    assert sum(run.current_elmo is not None for run in generated.runs) == 3
    from elmo_bench.report.diagnosis import variant_label
    labels = {r.path.parent.name: variant_label(r) for r in collect([dst]).runs if r.has_elmo}
    assert labels == {"elmo_old_default": "mix.dropout=0.2", "elmo_dropout_0.5": "task default"}
    with pytest.raises(DataError, match="not a directory of task configs"):
        export_results(src, tmp_path / "other", tmp_path / "missing")
