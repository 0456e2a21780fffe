"""`python run.py` (the README's main command) end to end, shortened: the quickstart sweep and its table."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from elmo_bench.bilm.default import DEFAULT_WEIGHTS
from tests.conftest import REPO


@pytest.mark.skipif(not DEFAULT_WEIGHTS.exists(), reason="the shipped biLM (elmo_bench/resources/bilm) is absent")
def test_quickstart_runs_offline_and_prints_the_table(tmp_path):
    older = tmp_path / "quickstart" / "glove-seed9"  # an earlier sweep's run: not part of this sweep's table
    older.mkdir(parents=True)
    (older / "results.json").write_text(json.dumps({"task": "ner", "embedder": "glove", "seed": 9, "main_metric": "f1",
                                                    "metrics": {"dev": {"f1": 1.0}}, "timings": {"total_seconds": 1}}))
    cmd = [sys.executable, "run.py", "experiment=quickstart", "trainer.max_epochs=1", "seed=3", "logger=disabled",
           "progress=false", f"paths.results_dir={tmp_path}", f"paths.cache_dir={tmp_path / 'cache'}"]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| ner | glove | 3 | f1 |" in done.stdout and "| ner | glove_elmo | 3 | f1 |" in done.stdout
    assert "| ner | glove | 9 |" not in done.stdout
    # the run directories carry the overrides (a different budget or seed never lands on an older run's results)
    run_dir = tmp_path / "quickstart" / "glove_elmo-seed3" / "trainer.max_epochs=1"
    results = json.loads((run_dir / "results.json").read_text())
    assert results["seed"] == 3 and results["epochs"]["run"] == 1
    assert results["bilm"]["name"] == "shipped" and results["data"]["name"] == "ner_sample"
    assert len(results["mixes"]["input"]["weights"]) == results["bilm"]["layers"]
