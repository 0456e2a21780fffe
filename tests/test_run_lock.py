"""Issue 27 item 11: two runs started into one run directory both trained; now the second stops with
``error: DIR is in use by pid N``, and the lock of a process that died (kill -9) is taken over."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.engine.run_lock import LOCK_FILE, run_dir_lock
from tests.conftest import REPO
from tests.warm_python import run_python

HOLDER = """
import sys, time
from elmo_bench.engine.run_lock import run_dir_lock
with run_dir_lock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(120)
"""


def _hold(run_dir: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HOLDER), str(run_dir)], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_run_into_a_directory_another_process_holds_stops_with_one_line(tmp_path):
    run_dir = tmp_path / "run"
    holder = _hold(run_dir)
    try:
        done = run_python(
             ["run.py", "task=ner", "embedder=glove", "data=ner_sample", "trainer.max_epochs=1",
             "logger=disabled", "progress=false", f"paths.results_dir={tmp_path / 'results'}",
             f"paths.cache_dir={tmp_path / 'cache'}", f"hydra.run.dir={run_dir}"],
                          cwd=REPO, timeout=300)
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {run_dir} is in use by pid {holder.pid} ")
    assert not (run_dir / "checkpoint.pt").exists() and not (run_dir / "results.json").exists()


def test_the_lock_of_a_killed_process_is_taken_over(tmp_path):
    holder = _hold(tmp_path)
    with pytest.raises(ConfigError, match=f"is in use by pid {holder.pid} "):
        with run_dir_lock(tmp_path):
            pass
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    assert (tmp_path / LOCK_FILE).read_text().split() == [str(holder.pid)]  # a stale lock file is left
    with run_dir_lock(tmp_path):
        assert (tmp_path / LOCK_FILE).read_text().split() == [str(os.getpid())]


def test_one_process_cannot_hold_a_directory_twice_and_releases_it(tmp_path):
    with run_dir_lock(tmp_path):
        with pytest.raises(ConfigError, match=f"{tmp_path} is in use by pid {os.getpid()} "):
            with run_dir_lock(tmp_path):
                pass
    with run_dir_lock(tmp_path):  # released at the end of the block
        pass
