"""Quiet by default: an offline run's wandb messages go to the run's log file, not the terminal; `-v` (or a verbose
RunLogger) prints them as wandb always did. Runs are one epoch on the bundled NER sample with GloVe only."""
from __future__ import annotations

from pathlib import Path

from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.run_logger import RunLogger
from tests.conftest import REPO
from tests.engine_helpers import compose_run
from tests.warm_python import run_python

RUN = ["task=ner", "data=ner_sample", "embedder=glove", "trainer=quick", "trainer.max_epochs=1", "logger=offline",
       "progress=false"]


def _run(tmp_path: Path, *extra: str) -> tuple[str, str]:
    """(stdout + stderr, run.log) of one offline run."""
    results = tmp_path / "results"
    done = run_python(["run.py", *RUN, *extra, f"paths.results_dir={results}",
                       f"paths.cache_dir={tmp_path / 'cache'}"], cwd=REPO,
                      timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (log,) = list(results.rglob("run.log"))
    return done.stdout + done.stderr, log.read_text()


def test_offline_run_prints_no_wandb_lines_and_its_log_file_has_them(tmp_path):
    printed, log = _run(tmp_path)
    assert "wandb" not in printed
    assert "epoch 0: loss" in printed and "results: {" in printed  # progress and the result line stay
    # wandb's header, sync hint and run summary, in the run's log
    assert "W&B syncing is set to `offline`" in log and "wandb sync " in log and "Run summary:" in log
    assert "test/f1" in log


def test_dash_v_prints_wandb_as_before(tmp_path):
    printed, _ = _run(tmp_path, "-v")
    assert "wandb: W&B syncing is set to `offline`" in printed and "wandb: wandb sync " in printed


def test_run_logger_outside_hydra_writes_wandb_to_run_dir_log_and_restores_the_terminal(tmp_path, capfd):
    run = run_config(compose_run(tmp_path, "task=ner", "data=ner_sample", "embedder=glove", "logger=offline",
                                 "logger.project=p", tiny=False))
    quiet = RunLogger(run, tmp_path / "a", verbose=False)
    quiet.log({"loss": 1.0}, step=0)
    quiet.finish()
    out, err = capfd.readouterr()
    # wandb's warnings still reach the terminal (here: no git repository around the run dir); nothing else does
    assert [line for line in (out + err).splitlines() if "WARNING" not in line] == []
    assert "wandb sync " in (tmp_path / "a" / "run.log").read_text()
    stranded = RunLogger(run, tmp_path / "c", verbose=False)  # a run that fails: no finish
    assert stranded.run is not None
    loud = RunLogger(run, tmp_path / "b", verbose=True)  # wandb's own output is back
    loud.finish()
    out, err = capfd.readouterr()
    assert "wandb: wandb sync " in out + err
    assert not (tmp_path / "b" / "run.log").exists()
