"""Issue 56 item 6, through ``python run.py`` as a user runs it: a distribution whose entry point declares ``ner``
(a name a shipped task has) leaves every probe run working, since a probe run composes no task; a task run still
gets the clash's one line. The test biLM and tiny UD-like data (tests/test_probe_runs.py)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import needs_fixtures
from tests.test_probe_runs import REPO, common, ewt
from tests.warm_python import run_python

pytestmark = needs_fixtures


def plug_in(site: Path) -> Path:
    """A third-party task package on ``site`` with its ``elmo_bench.tasks`` entry point declaring ``ner``."""
    package = site / "user56_ner"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "config.py").write_text("from elmo_bench.tasks.declaration import TaskDeclaration\n"
                                       "TASK = TaskDeclaration('ner', 'user56_ner.task:Ner')\n")
    meta = site / "user56_ner-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: user56-ner\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text("[elmo_bench.tasks]\nner = user56_ner.config:TASK\n")
    return site


def run_py(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_python(["run.py", *args], cwd=REPO, env=env, timeout=300)


def test_an_entry_point_declaring_ner_leaves_a_probe_run_working(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(plug_in(tmp_path / "site"))}
    data, out = ewt(tmp_path / "ewt", train=40), tmp_path / "run"
    done = run_py("probe=structural", *common(tmp_path, data), "++probe.max_epochs=1", "++probe.rank=4",
                  f"hydra.run.dir={out}", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "declared by two packages" in done.stderr                 # the scan's warning, and nothing worse
    assert json.loads((out / "results.json").read_text())["metrics"]
    done = run_py("task=ner", "logger=disabled", f"paths.results_dir={tmp_path / 'results'}", env=env)
    assert done.returncode == 2 and not (tmp_path / "results").exists()      # the scan's warning, then the refusal
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("error: task name 'ner' is declared by two packages") and "user56_ner" in line, line


def test_a_sweep_over_probes_composes_no_task_either(tmp_path):
    """``-m probe=structural,ridge`` (run.py adds experiment=probe_sweep: its primary config, composed before a
    probe is chosen, composes no task) and experiment=probe_suite's primary config, under the same plug-in."""
    from elmo_bench.commands.hydra_setup import compose_config

    env = {**os.environ, "PYTHONPATH": str(plug_in(tmp_path / "site"))}
    data, sweep = ewt(tmp_path / "ewt", train=40), tmp_path / "sweep"
    done = run_py("-m", "probe=structural,ridge", *common(tmp_path, data)[:-1], f"probe.data_dir={data}",
                  f"hydra.sweep.dir={sweep}", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.parent.relative_to(sweep).as_posix() for p in sweep.rglob("results.json")) == [
        "probes/ridge/fixture-seed1", "probes/structural/fixture-seed1"]           # no experiment in the names
    for experiment in ("probe_sweep", "probe_suite"):
        assert "task" not in compose_config([f"experiment={experiment}"]), experiment
