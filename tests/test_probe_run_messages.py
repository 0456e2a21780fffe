"""Issue 56 item 10: the lines a user gets, run as a user runs them (``python run.py ...``, ``python -m elmo_bench
...``). (a) ``evaluate`` on a probe run says it is one (it said the run "trained no epoch ... an untrained head's");
(b) ``python run.py probe=...`` names config keys, the ``elmo-bench probe-*`` aliases their flags (run.py said
``--max-train-sentences`` and ``--random-init``); (c) ``encoder.layers`` on the biLM and ``encoder.erase.*`` on
hdf5 give the documented lines (docs/failure-modes.md), not Hydra's "not in struct" or "unknown key"."""
from __future__ import annotations

import pickle
import shutil
import subprocess
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from tests.conftest import FIXTURES, REPO, needs_fixtures
from tests.test_probe_runs import ewt
from tests.warm_python import run_python

PROBE_RECORD = REPO / "docs" / "results" / "probes" / "pos_v2_final_4000" / "results.json"


def python(*args: str) -> subprocess.CompletedProcess:
    return run_python(list(args), cwd=REPO, timeout=300)


def refused(done: subprocess.CompletedProcess) -> str:
    """The one line a refusal printed (exit 2; Hydra's and the biLM check's logging lines apart)."""
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    lines = [line for line in done.stderr.strip().splitlines() if line.startswith("error: ")]
    others = [line for line in done.stderr.strip().splitlines() if line.strip() and not line.startswith(("[20", "20"))]
    assert len(lines) == 1 and others == lines, done.stderr[-3000:]
    return lines[0]


def fixture_bilm(tmp_path: Path) -> list[str]:
    return ["bilm=fixture", f"bilm.options={FIXTURES / 'options.json'}", f"bilm.weights={FIXTURES / 'lm_weights.hdf5'}",
            f"paths.cache_dir={tmp_path / 'cache'}", f"paths.results_dir={tmp_path / 'results'}", "logger=disabled",
            "progress=false"]


# (a) evaluate on a probe run ---------------------------------------------------------------------------------------

@needs_fixtures
def test_evaluate_on_a_run_py_probe_run_says_it_is_a_probe_run(tmp_path):
    data, run = ewt(tmp_path / "ewt", train=8), tmp_path / "run"
    done = python("run.py", "probe=structural", *fixture_bilm(tmp_path), f"++probe.data_dir={data}",
                  "++probe.max_epochs=1", "++probe.rank=4", f"hydra.run.dir={run}")
    assert done.returncode == 0, done.stderr[-3000:]
    before = (run / "results.json").read_bytes()
    line = refused(python("-m", "elmo_bench", "evaluate", str(run)))   # was "the run trained no epoch ..."
    assert line == (f"error: {run}: a probe run (probe=structural), not a task run: its results.json already holds "
                    f"its scores; evaluate re-evaluates a task run (python run.py task=...) from its best.pt")
    assert (run / "results.json").read_bytes() == before and not (run / "best.pt").exists()


def test_evaluate_on_a_probe_aliass_directory_says_it_is_a_probe_run(tmp_path):
    run = tmp_path / "pos"            # elmo-bench probe-pos --out DIR: a results.json, no run.json
    run.mkdir()
    shutil.copy(PROBE_RECORD, run / "results.json")
    line = refused(python("-m", "elmo_bench", "evaluate", str(run)))   # was "no run.json (expected a run ...)"
    assert line == (f"error: {run}: a probe run (results.json's task pos_probe), not a task run: its results.json "
                    f"already holds its scores; evaluate re-evaluates a task run (python run.py task=...) from its "
                    f"best.pt")
    assert sorted(p.name for p in run.iterdir()) == ["results.json"]


# (b) config keys under run.py, flags under the aliases ---------------------------------------------------------------

MDL_LINE = ("error: online code: block 1 (sentences 0·N to 0.001·N, N = 8) has no sentence; expected {} of at least "
            "1000 for this schedule")


@needs_fixtures
def test_run_py_probe_mdl_names_the_config_key_and_probe_mdl_its_flag(tmp_path):
    data, run = ewt(tmp_path / "ewt", train=8), tmp_path / "run"
    line = refused(python("run.py", "probe=mdl", *fixture_bilm(tmp_path), f"++probe.data_dir={data}",
                          f"hydra.run.dir={run}"))
    assert line == MDL_LINE.format("probe.max_train_sentences")          # was --max-train-sentences
    assert not run.exists()
    line = refused(python("-m", "elmo_bench", "probe-mdl", "--options", str(FIXTURES / "options.json"), "--weights",
                          str(FIXTURES / "lm_weights.hdf5"), "--data-dir", str(data), "--cache-dir",
                          str(tmp_path / "cache"), "--no-progress", "--out", str(tmp_path / "out")))
    assert line == MDL_LINE.format("--max-train-sentences")
    assert not (tmp_path / "out").exists()


@needs_fixtures
def test_run_py_names_bilm_random_init_and_probe_pos_its_flag(tmp_path):
    data, run = ewt(tmp_path / "ewt", train=8), tmp_path / "run"
    line = refused(python("run.py", "probe=pos", "bilm=random", "bilm.random_init=bogus",
                          f"bilm.options={FIXTURES / 'options.json'}", f"bilm.weights={FIXTURES / 'lm_weights.hdf5'}",
                          "logger=disabled", f"++probe.data_dir={data}", f"hydra.run.dir={run}"))
    assert line == "error: config: bilm.random_init expected one of all, lstm, found 'bogus'"   # was --random-init
    assert not run.exists()
    line = refused(python("-m", "elmo_bench", "probe-pos", "--encoder", "transformers", "--model", str(tmp_path / "m"),
                          "--random-init", "lstm"))
    assert line == ("error: --random-init lstm: encoder transformers cannot be randomised that way (randomisable: "
                    "bilm: all|lstm; transformers: all)")


def test_an_error_naming_a_key_is_spelled_as_the_command_takes_it():
    error = ConfigError("expected probe.max_train_sentences of at least 1000", key="probe.max_train_sentences")
    spelled = error.spelled({"probe.max_train_sentences": "--max-train-sentences"})
    assert str(spelled) == "expected --max-train-sentences of at least 1000" and spelled.key == "--max-train-sentences"
    assert error.spelled({"probe.layers": "--layers"}) is error            # a key the command does not rename
    plain = ConfigError("config: probe.max_train_sentences expected an integer >= 1")   # no key: never rewritten
    assert plain.spelled({"probe.max_train_sentences": "--max-train-sentences"}) is plain
    back = pickle.loads(pickle.dumps(error))                                # a submitit job's error comes back pickled
    assert str(back) == str(error) and back.key == error.key


# (c) keys another encoder kind reads -------------------------------------------------------------------------------

LAYERS_LINE = "error: config: encoder.layers applies to encoder=transformers only (found encoder=bilm); remove it"
ERASE_LINE = ("error: config: encoder.erase applies to encoder=bilm|transformers (the forward pass runs here), found "
              "encoder=hdf5; remove encoder.erase.{}")


@pytest.mark.parametrize("args, expected", [
    (["task=pos", "embedder=elmo", "encoder.layers=[0,1]"], LAYERS_LINE),          # was Hydra's "not in struct"
    (["task=pos", "embedder=elmo", "+encoder.layers=[0,1]"], LAYERS_LINE),         # was "unknown key encoder.layers"
    (["probe=pos", "+encoder.layers=[0,1]"], LAYERS_LINE),
    (["probe=pos", "encoder=hdf5", "encoder.path=/nonexistent/layers.hdf5", "encoder.erase.concept=upos"],
     ERASE_LINE.format("concept")),                                               # was Hydra's "not in struct"
    (["task=pos", "embedder=elmo", "encoder=hdf5", "encoder.path=/nonexistent/layers.hdf5",
      "+encoder.erase.concept=upos"], ERASE_LINE.format("concept")),             # was "unknown key encoder.erase"
    (["task=pos", "embedder=elmo", "encoder=hdf5", "encoder.path=/nonexistent/layers.hdf5", "encoder.erase.layer=2"],
     ERASE_LINE.format("layer")),
])
def test_a_key_another_encoder_kind_reads_is_the_documented_line(tmp_path, args, expected):
    results = tmp_path / "results"
    line = refused(python("run.py", *args, "logger=disabled", f"paths.results_dir={results}",
                          f"paths.cache_dir={tmp_path / 'cache'}", f"hydra.run.dir={tmp_path / 'run'}"))
    assert line == expected
    assert not results.exists() and not (tmp_path / "run").exists() and not (tmp_path / "cache").exists()


def test_a_key_no_encoder_kind_reads_keeps_hydras_line(tmp_path):
    line = refused(python("run.py", "task=pos", "embedder=elmo", "encoder.bogus=1", "logger=disabled",
                          f"paths.results_dir={tmp_path}"))
    assert line == "error: Could not override 'encoder.bogus'. (Key 'bogus' is not in struct)"
