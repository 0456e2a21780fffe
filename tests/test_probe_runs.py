"""Issue 44's "Show" list and bad input, through ``python run.py probe=...`` itself (a subprocess, as a user runs it):
a submitit sweep finishes, skips when run again, and never reuses another encoder's directory (a forced one is
refused in one line naming the keys that differ); ``kill -9`` then the same command gives an uninterrupted run's
metrics; a truncated or empty results.json is redone, one without run.json refused; each bad input is one line,
exit 2, nothing written. The test biLM and tiny UD-like data (1,000 training sentences: MDL's minimum)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, needs_fixtures
from tests.warm_python import run_python

REPO = Path(__file__).resolve().parents[1]
pytestmark = needs_fixtures

TREES = [[("The", "DT", 2), ("dog", "NN", 3), ("barked", "VBD", 0), (".", ".", 3)],
         [("A", "DT", 2), ("cat", "NN", 3), ("slept", "VBD", 0), ("here", "RB", 3), (".", ".", 3)],
         [("dogs", "NNS", 2), ("bark", "VBP", 0)],
         [("I", "PRP", 2), ("run", "VBP", 0), ("fast", "RB", 2), (".", ".", 2)]]
DEV = [[("A", "DT", 2), ("dog", "NN", 3), ("slept", "VBD", 0), (".", ".", 3)],
       [("cats", "NNS", 2), ("bark", "VBP", 0), ("here", "RB", 2)]]
TEST = [[("The", "DT", 2), ("cat", "NN", 3), ("barked", "VBD", 0), (".", ".", 3)],
        [("I", "PRP", 2), ("bark", "VBP", 0), ("fast", "RB", 2)]]


def conllu(sentences) -> str:
    out = []
    for i, sentence in enumerate(sentences):
        out.append(f"# sent_id = s{i}")
        out += [f"{k + 1}\t{w}\t_\t{'PUNCT' if t == '.' else 'X'}\t{t}\t_\t{h}\t_\t_\t_"
                for k, (w, t, h) in enumerate(sentence)] + [""]
    return "\n".join(out) + "\n"


def ewt(root: Path, train: int = 1000, dev=DEV, test=TEST) -> Path:
    """A UD English-EWT-like directory with trees (structural) and PTB tags (MDL, POS)."""
    root.mkdir(parents=True)
    for split, sentences in (("train", [TREES[i % 4] for i in range(train)]), ("dev", dev), ("test", test)):
        if sentences is not None:
            (root / f"en_ewt-ud-{split}.conllu").write_text(conllu(sentences))
    return root


def common(tmp: Path, data: Path) -> list[str]:
    """The test biLM, the data, a cache, no logger; a probe's settings are given with ``++`` (see below)."""
    return ["bilm=fixture", f"bilm.options={FIXTURES / 'options.json'}", f"bilm.weights={FIXTURES / 'lm_weights.hdf5'}",
            f"paths.cache_dir={tmp / 'cache'}", f"paths.results_dir={tmp / 'results'}", "logger=disabled",
            "progress=false", f"++probe.data_dir={data}"]


def run_py(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return run_python(["run.py", *args], cwd=REPO,
                      timeout=timeout)


def one_line(done: subprocess.CompletedProcess) -> str:
    """The refusal: exit 2 and one line on stderr (Hydra's logging apart)."""
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    lines = [line for line in done.stderr.strip().splitlines() if line.strip() and not line.startswith("[20")]
    assert len(lines) == 1, done.stderr[-3000:]
    return lines[0]


def results(root: Path) -> dict[str, Path]:
    return {str(p.parent.relative_to(root)): p for p in sorted(root.rglob("results.json"))}


def metrics(path: Path) -> dict:
    return json.loads(path.read_text())["metrics"]


def test_a_sweep_finishes_skips_never_reuses_and_a_forced_dir_is_refused(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="hydra-submitit-launcher not installed")
    data, sweep = ewt(tmp_path / "ewt"), tmp_path / "sweep"
    # the plain probe.<key>=v spelling in a sweep over probes (run.py passes it as ++probe.<key>: probe_sweep_args)
    args = ["-m", "probe=structural,mdl", *common(tmp_path, data)[:-1], f"probe.data_dir={data}", "probe.max_epochs=1",
            "hydra/launcher=submitit_local", f"hydra.sweep.dir={sweep}"]
    done = run_py(*args)
    assert done.returncode == 0, done.stderr[-3000:]
    first = results(sweep)
    assert sorted(k.split("/")[1] for k in first) == ["mdl", "structural"], first
    assert all("/fixture-seed" in k for k in first)
    stamps = {k: p.stat().st_mtime_ns for k, p in first.items()}
    done = run_py(*args)                                       # again: both skipped, nothing rewritten
    assert done.returncode == 0, done.stderr[-3000:]
    assert {k: p.stat().st_mtime_ns for k, p in results(sweep).items()} == stamps
    random = [a if a != "probe=structural,mdl" else "probe=structural"   # one job: enough to show it
              for a in args if not a.startswith("bilm")] + ["bilm=random", "bilm.random_init=all",
                                                              f"bilm.options={FIXTURES / 'options.json'}",
                                                              f"bilm.weights={FIXTURES / 'lm_weights.hdf5'}"]
    done = run_py(*random)                                     # another encoder: new directories
    assert done.returncode == 0, done.stderr[-3000:]
    now = results(sweep)
    assert set(now) - set(first) and all("/random-lm_weights.hdf5~" in k for k in set(now) - set(first)), now
    assert {k: p.stat().st_mtime_ns for k, p in now.items() if k in stamps} == stamps
    structural = first[next(k for k in first if "structural" in k)].parent
    forced = [a for a in random if a not in ("-m",) and not a.startswith(("hydra", "probe="))]
    line = one_line(run_py("probe=structural", *forced, f"hydra.run.dir='{structural}'"))   # its name has "="
    assert str(structural) in line and "encoder.hash" in line, line
    assert {k: p.stat().st_mtime_ns for k, p in results(sweep).items() if k in stamps} == stamps


def structural_args(tmp_path: Path, data: Path, out: Path, epochs: int = 3) -> list[str]:
    return ["probe=structural", *common(tmp_path, data), f"++probe.max_epochs={epochs}", "++probe.rank=4",
            f"hydra.run.dir={out}"]


def test_kill_9_then_the_same_command_gives_an_uninterrupted_runs_metrics(tmp_path):
    data = ewt(tmp_path / "ewt", train=40)
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    assert run_py(*structural_args(tmp_path, data, clean)).returncode == 0
    process = subprocess.Popen([sys.executable, "run.py", *structural_args(tmp_path, data, killed)], cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:                                           # kill -9 once the run owns its directory, before it finishes
        deadline = time.monotonic() + 120
        while not (killed / "run.json").exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL and (killed / "run.json").exists()
    assert not (killed / "results.json").exists()
    done = run_py(*structural_args(tmp_path, data, killed))
    assert done.returncode == 0, done.stderr[-3000:]
    assert metrics(killed / "results.json") == metrics(clean / "results.json")
    # a truncated, then an empty results.json of this run is redone (never taken as finished), with the same numbers
    for broken in (lambda t: t[: len(t) // 2], lambda t: ""):
        record = killed / "results.json"
        record.write_text(broken(record.read_text()))
        done = run_py(*structural_args(tmp_path, data, killed))
        assert done.returncode == 0, done.stderr[-3000:]
        assert metrics(record) == metrics(clean / "results.json")
    # a results.json with no run.json (not a probe run of ours): refused, untouched
    alien = tmp_path / "alien"
    alien.mkdir()
    shutil.copy(clean / "results.json", alien / "results.json")
    before = (alien / "results.json").read_bytes()
    line = one_line(run_py(*structural_args(tmp_path, data, alien)))
    assert "without run.json" in line and (alien / "results.json").read_bytes() == before
    assert sorted(p.name for p in alien.iterdir()) == ["results.json"]


def test_two_processes_into_one_run_dir_the_second_is_one_line(tmp_path):
    data, out = ewt(tmp_path / "ewt", train=8), tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from elmo_bench.engine.run_lock import "
                               "run_dir_lock\nwith run_dir_lock(sys.argv[1]):\n print('held', flush=True); "
                               "time.sleep(120)", str(out)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        line = one_line(run_py(*structural_args(tmp_path, data, out, epochs=1)))
        assert line.endswith(f"{out} is in use by pid {holder.pid} (a run of the same directory is going on; "
                             + line.split("going on; ", 1)[1]), line
        assert sorted(p.name for p in out.iterdir()) == [".elmo_bench.lock"]   # the holder's files untouched
    finally:
        holder.kill()
        holder.wait()


def test_a_probe_setting_in_a_sweep_over_probes_is_passed_with_plus_plus():
    from elmo_bench.commands.probe_sweep_args import probe_sweep_args

    assert probe_sweep_args(["run.py", "-m", "probe=structural,mdl", "probe.max_epochs=2", "seed=1"]) == \
        ["run.py", "-m", "probe=structural,mdl", "++probe.max_epochs=2", "seed=1", "experiment=probe_sweep"]
    assert probe_sweep_args(["run.py", "-m", "experiment=probe_suite", "probe.layers=[0]"])[-1] == "++probe.layers=[0]"
    for kept in (["run.py", "probe=structural", "probe.max_epochs=2"], ["run.py", "-m", "task=ner", "seed=1,2"],
                 ["run.py", "-m", "experiment=probe_pos", "row=all"]):
        assert probe_sweep_args(kept) == kept


def bad_dirs(tmp_path: Path) -> dict[str, Path]:
    same = ewt(tmp_path / "same", test=DEV)                   # test identical to dev
    empty = ewt(tmp_path / "empty", dev=None)
    (empty / "en_ewt-ud-dev.conllu").write_text("")
    fifo = ewt(tmp_path / "fifo", dev=None)
    os.mkfifo(fifo / "en_ewt-ud-dev.conllu")
    return {"same": same, "empty": empty, "fifo": fifo}


@pytest.mark.parametrize("case", ["layers", "epochs", "same", "empty"])
def test_bad_settings_and_data_stop_the_engine_before_it_writes(tmp_path, case):
    """The same refusals as run.py's below, through the engine in this process (run.py's own part, the one line and
    the directory Hydra made, is shown by the cases run below as a subprocess)."""
    from elmo_bench.base.errors import UserError
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import run_probe

    data = ewt(tmp_path / "ewt", train=8)
    dirs = bad_dirs(tmp_path) if case in ("same", "empty") else {}
    out = tmp_path / "out"
    base = [*common(tmp_path, dirs.get(case, data)), "++probe.max_epochs=1"]
    args = {"layers": ["probe=structural", *base, "++probe.layers=[7]"],
            "epochs": ["probe=structural", *base[:-1], "++probe.max_epochs=0"]}.get(case, ["probe=structural", *base])
    with pytest.raises(UserError) as refused:
        run_probe(job_run(args), out)
    expected = {"layers": "probe.layers", "epochs": "probe.max_epochs", "same": "dev", "empty": "dev"}[case]
    assert expected in str(refused.value) and "\n" not in str(refused.value)
    assert not out.exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize("case", ["unknown", "task", "fifo", "sweep", "suite", "suite_key"])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, case):
    data = ewt(tmp_path / "ewt", train=8)
    dirs = bad_dirs(tmp_path) if case in ("same", "empty", "fifo") else {}
    out = tmp_path / "out"
    base = [*common(tmp_path, dirs.get(case, data)), "++probe.max_epochs=1"]
    args = {"unknown": ["probe=no_such_probe", *base[:-2]],
            "task": ["probe=structural", "task=ner", *base],
            "layers": ["probe=structural", *base, "++probe.layers=[7]"],
            "epochs": ["probe=structural", *base[:-1], "++probe.max_epochs=0"],
            "sweep": ["-m", "probe=structural,mdl", *base[:-1], "probe.max_epochs=1,0", f"hydra.sweep.dir={out}"],
            "suite": ["-m", "experiment=probe_suite", *base[:-1], "probe.max_epochs=0", f"hydra.sweep.dir={out}"],
            "suite_key": ["experiment=probe_suite", *base[:-1], "probe.no_such_key=1", f"hydra.sweep.dir={out}"],
            }.get(case, ["probe=structural", *base])
    if case not in ("sweep", "suite", "suite_key"):
        args.append(f"hydra.run.dir={out}")
    line = one_line(run_py(*args, timeout=120))
    expected = {"unknown": "no_such_probe", "task": "task=ner", "layers": "probe.layers", "epochs": "probe.max_epochs",
                "same": "dev", "empty": "dev", "fifo": "dev", "sweep": "probe.max_epochs", "suite": "probe.max_epochs",
                "suite_key": "probe.no_such_key"}[case]
    assert expected in line, line
    assert not out.exists(), sorted(p.name for p in out.rglob("*"))
    assert not (tmp_path / "results").exists()
