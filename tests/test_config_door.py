"""Issue 34, the config door and the run directory (items 1, 5, 7, 8): run.py, ``elmo-bench plan`` and ``elmo-bench
evaluate`` check a config through one function (engine.config_door.resolve_run_config), so each refusal is the same
one ``error:`` line, exit 2, everywhere; a run turned away from a run directory leaves it byte for byte as it was.
Each test failed before its fix (real runs of run.py on the NER sample, real FIFOs, a real read-only file system)."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.main import main
from tests.conftest import REPO
from tests.warm_python import run_python

SAMPLES = REPO / "tasks" / "ner" / "samples"
READ_ONLY = Path("/sys/kernel")  # sysfs: no file can be created there, not even by root
BASE = ("task=ner", "embedder=glove", "data=ner_sample", "trainer.max_epochs=1", "logger=disabled", "progress=false")


def _run_py(tmp_path: Path, *extra: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return run_python(["run.py", *BASE, f"paths.results_dir={tmp_path / 'results'}",
                       f"paths.cache_dir={tmp_path / 'cache'}", *extra],
                      cwd=REPO, timeout=timeout)


def _one_error(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-3000:]
    assert "Traceback" not in done.stderr + done.stdout
    return lines[0]


def _plan_error(capsys, *overrides: str) -> str:
    capsys.readouterr()
    code = main(["plan", "--device", "cpu", "--format", "json", *BASE, *overrides])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


def _hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def special(tmp_path):
    """An empty file and a FIFO (a reader of either used to hang or go on with nothing)."""
    fifo = tmp_path / "train.fifo"
    os.mkfifo(fifo)
    (tmp_path / "empty.txt").write_text("")
    return {"EMPTY": str(tmp_path / "empty.txt"), "FIFO": str(fifo)}


# item 1: one door, the same line from run.py and plan (plan accepted +trainer.max_epoch=3 and the empty file; the
# FIFO hung both; ++ with an unknown key was silently added)
@pytest.mark.parametrize("override", ["trainer.batch_size=0", "+trainer.max_epoch=3", "++trainer.max_epoch=3",
                                      "data.train=EMPTY", "data.dev=/dev/zero"])
def test_run_py_and_plan_refuse_with_the_same_line(tmp_path, capsys, special, override):
    for name, path in special.items():
        override = override.replace(name, path)
    line = _one_error(_run_py(tmp_path, f"hydra.run.dir={tmp_path / 'run'}", override, timeout=120))
    assert _plan_error(capsys, override) == line
    assert not (tmp_path / "run" / "results.json").exists()
    if override.startswith("++"):
        assert "unknown key trainer.max_epoch (from ++trainer.max_epoch): did you mean trainer.max_epochs?" in line
    if "FIFO" in override or "/dev/zero" in override:
        assert ("is a FIFO" in line or "is a character device" in line) and "expected a regular data file" in line


def test_a_known_key_forced_with_plus_plus_is_allowed_and_an_unknown_one_is_not():
    from elmo_bench.engine.config_check import check_added_keys

    base = {"trainer": {"max_epochs": 3, "lr": 0.1}, "seed": 1}
    config = {"trainer": {"max_epochs": 3, "lr": 1, "lrr": 1}, "seed": 1}
    check_added_keys(["++trainer.lr=1"], config, REPO / "conf", base)
    with pytest.raises(ConfigError, match=r"unknown key trainer\.lrr \(from \+\+trainer\.lrr\): did you mean "
                                          r"trainer\.lr\?"):
        check_added_keys(["++trainer.lr=1", "++trainer.lrr=1"], config, REPO / "conf", base)


def test_a_bad_sweep_value_is_refused_before_any_job_runs(tmp_path, capsys):
    line = _one_error(_run_py(tmp_path, "-m", "seed=1,abc"))
    # typed at composition since issue 35 item 2 (runtime_schema, made from Runtime)
    assert line == ("error: Error merging override seed=abc (Value 'abc' of type 'str' could not be converted to "
                    "Integer)")
    assert not (tmp_path / "results").exists()  # the seed-1 job did not start
    assert _plan_error(capsys, "seed=1,abc") == line


def test_plan_refuses_a_local_encoder_directory_that_is_not_there(tmp_path, capsys):
    missing = tmp_path / "no_model"
    line = _plan_error(capsys, "embedder=glove_elmo", "encoder=transformers", f"encoder.path={missing}")
    assert line.startswith("error: ") and str(missing) in line and "no such directory" in line


# item 5: nothing written before the lock and the identity check pass
@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One finished run of the NER sample (data copied, so a test may swap a file for a FIFO)."""
    root = tmp_path_factory.mktemp("finished")
    shutil.copytree(SAMPLES, root / "data")
    data = [f"data.{s}={root / 'data' / f'sample.{s}'}" for s in ("train", "dev", "test")]
    done = _run_py(root, f"hydra.run.dir={root / 'run'}", *data)
    assert done.returncode == 0, done.stderr[-2000:]
    return root, data


def test_a_run_turned_away_leaves_the_other_runs_directory_byte_for_byte(finished):
    from elmo_bench.engine.run_lock import run_dir_lock

    root, data = finished
    run_dir = root / "run"
    assert {".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml", "run.log"} <= set(_hashes(run_dir))
    assert (run_dir / ".elmo_bench.lock").read_text() == ""  # no pid of a process that is gone
    before = _hashes(run_dir)
    line = _one_error(_run_py(root, f"hydra.run.dir={run_dir}", *data, "seed=2"))
    assert "made by a different configuration (seed: 1 → 2)" in line
    assert _hashes(run_dir) == before
    skipped = _run_py(root, f"hydra.run.dir={run_dir}", *data, "threads=2")  # the same run: nothing to do
    assert skipped.returncode == 0, skipped.stderr[-2000:]
    assert _hashes(run_dir) == before  # its Hydra record still shows the settings it ran with
    with run_dir_lock(run_dir):
        held = _hashes(run_dir)
        line = _one_error(_run_py(root, f"hydra.run.dir={run_dir}", *data))
        assert f"is in use by pid {os.getpid()}" in line
        assert _hashes(run_dir) == held


def test_evaluate_goes_through_the_door_a_fifo_is_refused_at_once(finished):
    root, _ = finished
    dev = root / "data" / "sample.dev"
    saved = dev.read_bytes()
    dev.unlink()
    os.mkfifo(dev)
    try:  # (it used to hang, hashing the FIFO for the data-identity check)
        done = run_python(["-m", "elmo_bench", "evaluate", str(root / "run")], cwd=REPO, timeout=120)
        assert _one_error(done) == (f"error: config: data.dev={dev} is a FIFO (named pipe); expected a regular "
                                    f"data file (or a directory where the dataset reads one)")
    finally:
        dev.unlink()
        dev.write_bytes(saved)


def test_a_results_json_the_program_did_not_write_is_refused(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    foreign = run_dir / "results.json"
    foreign.write_text('{"f1": 91.2}\n')
    line = _one_error(_run_py(tmp_path, f"hydra.run.dir={run_dir}"))
    assert line.startswith(f"error: {foreign}: not a results.json of this project (missing keys")
    assert "refusing to reuse" in line
    # the user's directory as it was: the run's lock file goes with the refusal (as a probe run's does)
    assert foreign.read_text() == '{"f1": 91.2}\n' and sorted(p.name for p in run_dir.iterdir()) == ["results.json"]


# item 7: one line, exit 2
@pytest.mark.skipif(not READ_ONLY.is_dir(), reason="needs sysfs")
def test_a_read_only_results_or_run_directory_is_one_line():
    for where in (f"paths.results_dir={READ_ONLY / 'elmo_results'}", f"hydra.run.dir={READ_ONLY}"):
        done = run_python(["run.py", *BASE, where], cwd=REPO,
                          timeout=120)
        line = _one_error(done)
        assert "a read-only directory, or not yours): choose another location" in line


def test_a_long_override_value_is_shortened_in_the_run_directory_name(tmp_path, capsys):
    from elmo_bench.commands.hydra_setup import run_suffix

    short = "a" * 40
    assert run_suffix(f"mix.name={short},trainer.lr=0.1") == f"/mix.name={short},trainer.lr=0.1"  # names kept
    one, two = (f"encoder.revision={'x' * 300}{end}" for end in ("a", "b"))
    assert run_suffix(one) != run_suffix(two) and run_suffix(one).startswith("/encoder.revision=" + "x" * 16 + "~")
    assert len(run_suffix(one)) == len("/encoder.revision=") + 16 + 1 + 10
    # a path is named by its label (its name and a hash), never spelled: long or not (tests/test_run_dir_names.py)
    one, two = (f"encoder.path=/models/{'x' * 300}/{end}" for end in ("a", "b"))
    assert run_suffix(one) != run_suffix(two) and run_suffix(one).startswith("/encoder.path=a~")
    assert len(run_suffix(one)) == len("/encoder.path=a~") + 10
    assert run_suffix("task.head.lstm_hidden=[5,100],~trainer.rho") == "/task.head.lstm_hidden=[5,100],~trainer.rho"
    missing = tmp_path / ("m" * 200) / ("n" * 200)  # a run directory named after it: over 255 bytes
    line = _one_error(_run_py(tmp_path, "embedder=glove_elmo", "encoder=transformers", f"encoder.path={missing}"))
    assert line == _plan_error(capsys, "embedder=glove_elmo", "encoder=transformers", f"encoder.path={missing}")
    assert "no such directory" in line


# item 8: the messages
def test_an_unknown_subcommand_is_an_error_line_with_the_closest_name(capsys):
    assert main(["embedd"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: elmo-bench: unknown command 'embedd': did you mean embed? ")
    assert len(err.strip().splitlines()) == 1


def test_an_unquoted_non_ascii_value_says_how_to_quote_it(tmp_path):
    line = _one_error(_run_py(tmp_path, "data.name=café"))
    assert line == "error: LexerNoViableAltException: data.name=café (quote the value: data.name='café', in a shell " \
                   "\"data.name='café'\")"
    from elmo_bench.commands.hydra_setup import compose_config

    assert compose_config(["data.name='café'"]).data.name == "café"  # the quoting suggested works
