"""tests/warm_python.py runs a command as the interpreter would: the same exit code, output, working directory,
argv, sys.path and environment as ``subprocess.run([sys.executable, ...])``, for scripts and ``-m`` modules; other
command lines and environments fall back to a real process; a timeout kills the command, not the warm process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.warm_python import run_python, warm

PROBE = """
import json, os, sys
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "path": sys.path[:3], "main": __name__,
                  "flag": os.environ.get("WARM_TEST_FLAG"), "stdin": sys.stdin.read()}))
print("to stderr", file=sys.stderr)
"""
ENDINGS = {"exit3": "import sys; sys.exit(3)", "message": "import sys; sys.exit('stopped: bad input')",
           "raise": "import atexit; atexit.register(lambda: print('atexit ran'))\nraise ValueError('boom')",
           "none": "import sys; sys.exit()", "big": "import sys; sys.exit(258)"}


def _both(args: list[str], cwd: Path, env: dict | None = None) -> tuple[subprocess.CompletedProcess, ...]:
    real = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    return real, run_python(args, cwd=cwd, env=env, timeout=60)


def test_a_script_sees_what_a_real_process_sees(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "lib").mkdir()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "lib")}
    real, warm = _both(["probe.py", "a b", "--x=1"], tmp_path, env)
    assert (warm.returncode, warm.stdout, warm.stderr) == (real.returncode, real.stdout, real.stderr)
    seen = json.loads(warm.stdout)
    assert seen["argv"] == ["probe.py", "a b", "--x=1"] and seen["path"][:2] == [str(tmp_path), str(tmp_path / "lib")]


def test_a_module_run_with_dash_m_sees_what_a_real_process_sees(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "__main__.py").write_text(PROBE)
    real, warm = _both(["-m", "pkg", "arg"], tmp_path)
    assert (warm.returncode, warm.stdout, warm.stderr) == (real.returncode, real.stdout, real.stderr)
    assert json.loads(warm.stdout)["main"] == "__main__"


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_exit_codes_messages_and_tracebacks_are_the_interpreters(tmp_path, ending):
    (tmp_path / "end.py").write_text(ENDINGS[ending] + "\n")
    real, warm = _both(["end.py"], tmp_path)
    assert (warm.returncode, warm.stdout) == (real.returncode, real.stdout)
    assert warm.stderr.splitlines()[-1:] == real.stderr.splitlines()[-1:]


def test_another_environment_or_a_flag_runs_a_real_process(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    shared = warm()                                   # the worker's own: a second one would cost its imports again
    assert shared.takes(["probe.py"], None) and shared.takes(["-m", "pkg"], {**os.environ, "PYTHONPATH": "x"})
    assert not shared.takes(["-c", "pass"], None) and not shared.takes(["-X", "importtime", "probe.py"], None)
    assert not shared.takes(["probe.py"], {**os.environ, "OMP_NUM_THREADS": "7"})   # read when torch loads
    done = run_python(["probe.py"], cwd=tmp_path, env={**os.environ, "WARM_TEST_FLAG": "on"})
    assert json.loads(done.stdout)["flag"] == "on"


def test_a_timeout_kills_the_command_and_the_next_one_runs(tmp_path):
    (tmp_path / "slow.py").write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    (tmp_path / "probe.py").write_text(PROBE)
    with pytest.raises(subprocess.TimeoutExpired):
        run_python(["slow.py"], cwd=tmp_path, timeout=1)
    assert run_python(["probe.py"], cwd=tmp_path, timeout=60).returncode == 0
