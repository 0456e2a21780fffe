"""Issue 57 item 3 (part): a biLM checkpoint series can be swept. Each checkpoint gets its own probe run directory
named by its weights' content (the shipped and fixture biLMs keep their names); before any job starts, two
checkpoints with identical weights under different paths are one warning line naming both, and a series of mixed
architectures is one line, exit 2, nothing written; a series probed twice is "nothing to do". The test biLM
(../shared/elmo_fixtures) copied under other names, and modified."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from tests.conftest import FIXTURES, needs_fixtures

pytestmark = needs_fixtures


def _copy(source: Path, target: Path, change=None) -> Path:
    """The fixture's weights file at ``target``; ``change(handle)`` edits the copy."""
    import h5py

    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    if change is not None:
        with h5py.File(target, "r+") as handle:
            change(handle)
    return target


def _nudge(handle) -> None:
    handle["char_embed"][...] = handle["char_embed"][...] + 1.0       # other weights, one architecture


def _widen(handle) -> None:
    rows = handle["char_embed"].shape[0]
    del handle["char_embed"]
    handle.create_dataset("char_embed", data=[[0.0] * 5] * rows)       # another width: another architecture


@pytest.fixture()
def series(tmp_path) -> dict[str, Path]:
    weights = FIXTURES / "lm_weights.hdf5"
    return {"a": _copy(weights, tmp_path / "ckpt" / "step_100" / "weights.hdf5"),
            "same": _copy(weights, tmp_path / "ckpt" / "step_200" / "weights_copy.hdf5"),
            "other": _copy(weights, tmp_path / "ckpt" / "step_300.hdf5", _nudge),
            "wide": _copy(weights, tmp_path / "ckpt" / "step_400.hdf5", _widen)}


def _where(tmp_path: Path) -> list[str]:
    from tests.test_probe_runs import ewt

    data = tmp_path / "ewt" if (tmp_path / "ewt").is_dir() else ewt(tmp_path / "ewt", train=40)
    return [f"paths.results_dir={tmp_path / 'results'}", f"paths.cache_dir={tmp_path / 'cache'}",
            "logger=disabled", "progress=false", f"probe.data_dir={data}"]


def _custom(*weights: Path, options: str | None = None) -> list[str]:
    return ["probe=ridge", "bilm=custom", f"bilm.options={options or FIXTURES / 'options.json'}",
            "bilm.weights=" + ",".join(str(w) for w in weights)]


def _hash(path: Path) -> str:
    from elmo_bench.encoders.model_files import file_hash

    return file_hash(path)[:10]


def _run_dir(overrides: list[str]) -> str:
    from elmo_bench.commands.compose import compose_job
    from elmo_bench.commands.hydra_setup import sweep_path

    return sweep_path(",".join(sorted(overrides)), _root_=compose_job(overrides, check=False))


def test_each_checkpoint_has_its_own_directory_named_by_content_and_the_biLMs_keep_theirs(series):
    one, other = _run_dir(_custom(series["a"])), _run_dir(_custom(series["other"]))
    assert one == f"probes/ridge/custom-weights.hdf5~{_hash(series['a'])}-seed1"
    assert other.startswith("probes/ridge/custom-step_300.hdf5~") and other != one
    moved = _copy(series["a"], series["a"].parent.parent / "elsewhere" / "weights.hdf5")
    assert _run_dir(_custom(moved)) == one                               # where it lives is not in the name
    assert _run_dir(["probe=ridge"]) == "probes/ridge/shipped-seed1"     # the shipped and fixture biLMs: unchanged
    assert _run_dir(["probe=ridge", "bilm=fixture", f"bilm.weights={FIXTURES / 'lm_weights.hdf5'}"]) == \
        "probes/ridge/fixture-seed1"
    assert _run_dir(["probe=ridge", "bilm=random"]) == "probes/ridge/random-seed1"


def test_identical_weights_under_two_names_are_one_warning_line_naming_both(series, tmp_path, capsys):
    from elmo_bench.commands.sweep_check import check_sweep

    where = _where(tmp_path)
    assert check_sweep(["run.py", "-m", *_custom(series["a"], series["other"]), *where]) == 2
    assert "identical weights" not in capsys.readouterr().err
    check_sweep(["run.py", "-m", *_custom(series["a"], series["same"], series["other"]), *where])
    lines = [line for line in capsys.readouterr().err.splitlines() if "identical weights" in line]
    assert len(lines) == 1 and str(series["a"]) in lines[0] and str(series["same"]) in lines[0], lines
    assert str(series["other"]) not in lines[0]
    assert not (tmp_path / "results").exists()


def test_mixed_architectures_are_refused_before_any_job(series, tmp_path):
    from elmo_bench.commands.sweep_check import check_sweep

    where = _where(tmp_path)
    with pytest.raises(ConfigError, match="mixed architectures") as wide:
        check_sweep(["run.py", "-m", *_custom(series["a"], series["wide"]), *where])
    assert str(series["a"]) in str(wide.value) and "char_embed" in str(wide.value)
    options = tmp_path / "options_wide.json"
    options.write_text((FIXTURES / "options.json").read_text().replace('"dim": 64', '"dim": 128'))
    with pytest.raises(ConfigError, match="mixed architectures.*options.lstm.dim"):
        check_sweep(["run.py", "-m", *_custom(series["a"], options=f"{FIXTURES / 'options.json'},{options}"),
                     *where])
    assert not (tmp_path / "results").exists()


def test_run_py_probes_a_series_then_resumes_it_as_nothing_to_do_and_refuses_a_mixed_one(series, tmp_path):
    from tests.test_probe_runs import one_line, results, run_py

    args = ["-m", *_custom(series["a"], series["other"]), *_where(tmp_path)]
    done = run_py(*args)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = results(tmp_path / "results" / "multirun")
    assert sorted(runs) == ["probes/ridge/custom-step_300.hdf5~" + _hash(series["other"]) + "-seed1",
                            "probes/ridge/custom-weights.hdf5~" + _hash(series["a"]) + "-seed1"], runs
    stamps = {name: path.stat().st_mtime_ns for name, path in runs.items()}
    again = run_py(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (again.stdout + again.stderr).count("nothing to do") == 2, again.stderr[-3000:]
    assert {name: path.stat().st_mtime_ns for name, path in results(tmp_path / "results" / "multirun").items()} == stamps
    mixed = tmp_path / "mixed"
    line = one_line(run_py("-m", *_custom(series["a"], series["wide"]), *_where(tmp_path)[1:],
                           f"paths.results_dir={mixed}"))
    assert "mixed architectures" in line and not mixed.exists(), line
