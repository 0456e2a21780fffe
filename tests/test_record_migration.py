"""``elmo-bench migrate`` (its record-file step, elmo_bench.engine.record_migration): a run recorded before the engine wrote the compact record files gets
exactly the files the engine writes now (computed with the task's own methods from its predictions and gold data),
once; ``export-results`` then copies them, and the report gives the same p-value as for a run recorded today."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from elmo_bench.commands.migrate import migrate_main
from elmo_bench.engine.experiment import load_task
from elmo_bench.engine.record_migration import migrate
from elmo_bench.report.export import export_results
from tests.report_sections import plugins
from tests.test_report_golden import make_tree

SST_RUNS = ("table1/sst/glove-seed1", "table1/sst/glove_elmo-seed1")
COMPACT = ("predictions_test.json.gz", "scores_test.json.gz")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_old_runs_get_the_files_the_engine_writes_now(tmp_path, capsys):
    make_tree(tmp_path / "results")
    shutil.rmtree(tmp_path / "results" / "broken")
    recorded_today = {rel: {n: (tmp_path / "results" / rel / n).read_bytes() for n in COMPACT} for rel in SST_RUNS}
    for rel in SST_RUNS:                                      # what the engine wrote before: predictions_test.json only
        for name in COMPACT:
            (tmp_path / "results" / rel / name).unlink()
    minimal = plugins().minimal                # as elmo-bench export-results passes the probes' record tasks
    _, warnings = export_results(tmp_path / "results", tmp_path / "before", minimal=minimal)
    assert len(warnings) == 4 and all("elmo-bench migrate" in w for w in warnings)
    assert migrate_main([str(tmp_path / "results")]) == 0
    assert json.loads(capsys.readouterr().out) == {"written": 4, "notes": 4, "files": 2, "keys": ["config.data.test"]}
    for rel in SST_RUNS:
        assert {n: (tmp_path / "results" / rel / n).read_bytes() for n in COMPACT} == recorded_today[rel]
    before = _files(tmp_path / "results")
    assert migrate([tmp_path / "results"]) == [] and _files(tmp_path / "results") == before   # once: nothing left
    assert export_results(tmp_path / "results", tmp_path / "after", minimal=minimal)[1] == []


def test_squad_answers_need_the_test_data_and_dev_answers_are_left_out(tmp_path):
    context = "The cat sat on the mat."
    gold = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": context, "qas": [
        {"id": "q1", "question": "Who sat?", "answers": [{"text": "The cat", "answer_start": 0}]},
        {"id": "q2", "question": "Where?", "answers": [{"text": "on the mat", "answer_start": 12}]}]}]}]}
    (tmp_path / "test.json").write_text(json.dumps(gold))
    run = tmp_path / "results" / "squad"
    run.mkdir(parents=True)
    task = load_task("squad")
    examples = task.read({"source": "local", "test": str(tmp_path / "test.json")})["test"]
    predictions = ["cat", "the mat"]
    f1 = task.metric(predictions, examples)["f1"]
    record = {"schema": 1, "task": "squad", "embedder": "glove", "seed": 1, "main_metric": "f1",
              "config": {"data": {"source": "local", "train": "absent.json", "dev": None,
                                  "test": str(tmp_path / "test.json")}},
              "metrics": {"test": {"f1": f1}}, "mixes": {}, "epochs": {}, "timings": {}, "bilm": None,
              "git_commit": None, "data": {"name": "tiny_squad"}}
    (run / "results.json").write_text(json.dumps(record))
    for split in ("dev", "test"):
        (run / f"predictions_{split}.json").write_text(json.dumps(
            [{"id": e["id"], "prediction": p} for e, p in zip(examples, predictions)]))
    notes = migrate([tmp_path / "results"])
    assert any("dev predictions left out" in n for n in notes)
    assert not (run / "predictions_dev.json.gz").exists()
    spans = json.loads(gzip.decompress((run / "predictions_test.json.gz").read_bytes()))
    assert spans == [{"index": 0, "prediction": [4, 7]}, {"index": 1, "prediction": [15, 22]}]
    rows = json.loads(gzip.decompress((run / "scores_test.json.gz").read_bytes()))
    assert rows["kind"] == "ratio" and rows["metric"] == "f1" and len(rows["rows"]) == 2
    assert 100 * sum(r[0] for r in rows["rows"]) / 2 == f1 and context not in json.dumps(spans)
