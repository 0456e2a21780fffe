"""Issue 35 item 3: adding a task is one new folder under tasks/ and no edit anywhere else.

A shipped task's folder holds everything about it, its YAML included (issue 55 item 6): copied under a new name
(its files and its name in them renamed, nothing else), it composes with its budget and paper presets, trains
through run.py and is priced by ``elmo-bench plan``. The tiny test task (tests/tiny_task: config.py declaring it,
task.py, conf/ with its YAML, samples/) is copied into
tasks/ of a temporary copy of the repository; there, with no other file changed, it trains through run.py, reaches
the report (its declared paper numbers beside its row, through the export), is scored by ``elmo-bench score`` and
priced by ``elmo-bench plan``; after a non-editable
``pip install .`` of that copy into a temporary target it is listed by ``elmo-bench score``, composes and is priced.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import DATA, REPO, needs_fixtures
from tests.warm_python import run_python

#: what the copy needs to run, install and compose (the rest of the repository plays no part)
SHIPPED = ("elmo_bench", "tasks", "conf", "hydra_plugins", "run.py", "pyproject.toml", "README.md")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _copy_with_tiny(tmp_path: Path) -> Path:
    """A copy of the repository with tests/tiny_task as tasks/tiny; asserts that nothing else differs."""
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in SHIPPED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, copy / name, symlinks=True, ignore=IGNORE)
        else:
            shutil.copy2(source, copy / name)
    before = _files(copy)
    shutil.copytree(REPO / "tests" / "tiny_task", copy / "tasks" / "tiny", ignore=IGNORE)
    added = _files(copy) - before
    assert added and all(path.startswith("tasks/tiny/") for path in added)
    assert all((copy / p).read_bytes() == (REPO / p).read_bytes() for p in before if not (REPO / p).is_symlink())
    return copy


def _copy_shipped(tmp_path: Path, source: str, name: str) -> Path:
    """A copy of the repository with the shipped task folder ``tasks/<source>`` copied as ``tasks/<name>``: every
    file and folder name and every text in it with ``source`` renamed ``name`` (what a contributor does to start a
    task from a shipped one); asserts that nothing outside the new folder differs."""
    copy = tmp_path / "repo"
    copy.mkdir()
    for part in SHIPPED:
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy2)(REPO / part, copy / part, **(
            {"symlinks": True, "ignore": IGNORE} if (REPO / part).is_dir() else {}))
    before = _files(copy)
    for path in sorted((REPO / "tasks" / source).rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        target = copy / "tasks" / name / str(path.relative_to(REPO / "tasks" / source)).replace(source, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes().replace(source.encode(), name.encode()))
    assert all(p.startswith(f"tasks/{name}/") for p in _files(copy) - before)
    return copy


@needs_fixtures
def test_a_copy_of_a_shipped_task_folder_under_a_new_name_composes_trains_and_plans(tmp_path):
    name = "edge_pos_copy"
    copy = _copy_shipped(tmp_path, "edge_pos", name)
    assert sorted(str(p.relative_to(copy / "tasks" / name)) for p in (copy / "tasks" / name / "conf").rglob("*.yaml")) \
        == [f"conf/budget_preset/cpu_{name}.yaml", f"conf/data/default_{name}.yaml", f"conf/data/{name}_sample.yaml",
            f"conf/head_preset/paper_{name}.yaml", f"conf/task/{name}.yaml"]
    shown = json.loads(_run(["-m", "elmo_bench", "config", "--format", "json", f"task={name}", "budget=cpu",
                             "head=paper"], copy, copy))
    assert shown["task"]["name"] == name and shown["data"]["max_train_sentences"] == 2000   # its own budget preset
    runs = tmp_path / "results"
    _run(["run.py", f"task={name}", f"data={name}_sample", "embedder=elmo", "bilm=fixture", "logger=disabled",
          "progress=false", "trainer.max_epochs=1", f"paths.data_root={DATA}", f"paths.cache_dir={tmp_path / 'cache'}",
          f"hydra.run.dir={runs / 'elmo'}"], copy, copy)
    saved = json.loads((runs / "elmo" / "results.json").read_text())
    assert saved["task"] == name and saved["data"]["name"] == f"{name}_sample" and "f1" in saved["metrics"]["test"]
    planned = json.loads(_run(["-m", "elmo_bench", "plan", f"task={name}", f"data={name}_sample", "embedder=elmo",
                               "bilm=fixture", f"paths.data_root={DATA}", "--format", "json"], copy, copy))["runs"][0]
    assert planned["task"] == name and planned["sizes"] == "measured"


def _run(args: list[str], cwd: Path, pythonpath: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    done = run_python([*args], cwd=cwd, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _plan_tiny(cwd: Path, pythonpath: Path) -> dict:
    out = _run(["-m", "elmo_bench", "plan", "task=tiny", "bilm=fixture", f"paths.data_root={DATA}",
                "--format", "json"], cwd, pythonpath)
    return json.loads(out)["runs"][0]


@needs_fixtures
def test_a_task_folder_under_tasks_trains_reaches_the_report_the_scorer_and_plan(tmp_path):
    copy = _copy_with_tiny(tmp_path)
    runs = tmp_path / "results"
    _run(["run.py", "task=tiny", "embedder=glove_elmo", "bilm=fixture", "logger=disabled", "progress=false",
          "trainer.max_epochs=1", f"paths.data_root={DATA}", f"paths.cache_dir={tmp_path / 'cache'}",
          f"hydra.run.dir={runs / 'glove_elmo'}"], copy, copy)
    saved = json.loads((runs / "glove_elmo" / "results.json").read_text())
    assert saved["task"] == "tiny" and saved["data"]["name"] == "tiny_sample"
    # the export carries what the task declares (its invented paper numbers): the report shows them beside its row
    exported = tmp_path / "exported"
    _run(["-m", "elmo_bench", "export-results", str(runs), str(exported)], copy, copy)
    assert json.loads((exported / "task_declarations.json").read_text())["tasks"]["tiny"]["paper_row"] == 6
    _run(["-m", "elmo_bench", "report", str(exported), "--out", str(tmp_path / "report"), "--no-bootstrap"],
         copy, copy)
    row = next(line for line in (tmp_path / "report" / "report.md").read_text().splitlines()
               if line.startswith("| tiny |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    accuracy = f"{saved['metrics']['test']['accuracy']:.2f}"
    assert cells[:5] == ["tiny", "tiny_sample", "accuracy", "—", accuracy]
    assert cells[8:12] == ["—", "50.00", "75.00", "+25.00 / 50.0%"]          # paper baseline, +ELMo, increase
    predictions = json.loads((runs / "glove_elmo" / "predictions_test.json").read_text())
    (tmp_path / "pred.txt").write_text("".join(f"{p['prediction']}\n" for p in predictions))
    gold = copy / "tasks" / "tiny" / "samples" / "test.tsv"
    scored = _run(["-m", "elmo_bench", "score", "tiny", str(gold), str(tmp_path / "pred.txt")], copy, copy)
    assert json.loads(scored) == {"accuracy": saved["metrics"]["test"]["accuracy"]}
    planned = _plan_tiny(copy, copy)
    assert planned["task"] == "tiny" and planned["sizes"] == "measured" and planned["train_examples"] == 48


@needs_fixtures
def test_a_task_folder_ships_with_a_non_editable_install(tmp_path):
    copy = _copy_with_tiny(tmp_path)
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", str(copy), "--target", str(target), "--no-deps",
                           "--no-build-isolation", "--no-index", "-q"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (target / "elmo_bench" / "tasks" / "tiny" / "conf" / "task" / "tiny.yaml").is_file()
    assert (target / "elmo_bench" / "tasks" / "tiny" / "samples" / "train.tsv").is_file()
    assert (target / "hydra_plugins" / "elmo_bench_tasks" / "__init__.py").is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    usage = _run(["-m", "elmo_bench", "score", "--help"], elsewhere, target)
    assert "tiny" in usage.split("positional arguments")[0]
    planned = _plan_tiny(elsewhere, target)
    assert planned["task"] == "tiny" and planned["train_examples"] == 48


#: the console script ``elmo-bench`` of a ``pip install -e`` venv, run in a fresh process from another folder:
#: setuptools' own editable finder (the module pip writes into site-packages) maps elmo_bench and the Hydra plugin
#: to the copy, and ``hydra_plugins`` is then a namespace whose path is the finder's hook, no folder (any other
#: editable install of the project on this interpreter is taken off the import path first)
EDITABLE_MAIN = """import sys
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
sys.path.insert(0, {site!r})
import __editable___test56_finder as finder
finder.install()
from elmo_bench.commands.main import main
sys.exit(main())
"""


def test_the_console_script_of_an_editable_install_finds_a_task_folder_from_another_folder(tmp_path):
    """Issue 56 item 7: ``elmo-bench config task=tiny`` in the README's ``pip install -e`` venv found no task folder
    (Hydra's plugin discovery walks ``hydra_plugins``' folders, an editable install has none); the entry point
    ``elmo_bench.commands.main:main`` registers the search path itself now."""
    import pytest

    template = pytest.importorskip("setuptools.command.editable_wheel")._finder_template
    copy = _copy_with_tiny(tmp_path)
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    site.mkdir(), elsewhere.mkdir()
    mapping = {"elmo_bench": str(copy / "elmo_bench"),
               "hydra_plugins.elmo_bench_tasks": str(copy / "hydra_plugins" / "elmo_bench_tasks")}
    (site / "__editable___test56_finder.py").write_text(template("__editable__.test56.finder", mapping,
                                                                 {"hydra_plugins": []}))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", EDITABLE_MAIN.format(site=str(site)), "config", "task=tiny"],
                          cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "- task=tiny" in done.stdout and "tiny" in done.stdout.split("task:", 1)[1]
