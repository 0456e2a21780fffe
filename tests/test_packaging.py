"""What `pip install` ships: tasks/ as elmo_bench.tasks (nothing named `tasks` in site-packages), every package folder
listed, and a source checkout importing its own tasks/ through the elmo_bench/tasks symlink."""
from __future__ import annotations

import os
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]


def _setuptools() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def _on_disk() -> set[str]:
    found = set()
    for top, root in (("elmo_bench", REPO / "elmo_bench"), ("elmo_bench.tasks", REPO / "tasks")):
        for init in root.rglob("__init__.py"):  # rglob does not follow the elmo_bench/tasks symlink
            found.add(".".join([top, *init.parent.relative_to(root).parts]))
    return found


def test_tasks_installs_inside_elmo_bench():
    config = _setuptools()
    assert config["package-dir"] == {"elmo_bench.tasks": "tasks"}
    assert set(config["packages"]) == {"find"}, "the package list is found (packages.find), never written"
    assert "elmo_bench.tasks" in config["package-data"] and "tasks" not in config["package-data"]


def test_every_package_folder_is_found_and_nothing_else():
    """setuptools' own scan with the pyproject's find options (it follows the elmo_bench/tasks symlink): every
    package folder, the Hydra search-path plugin, and no data folder."""
    from setuptools import find_namespace_packages

    find = _setuptools()["packages"]["find"]
    cwd = os.getcwd()
    try:
        os.chdir(REPO)
        found = set(find_namespace_packages(include=find["include"], exclude=find["exclude"]))
    finally:
        os.chdir(cwd)
    assert found == _on_disk() | {"hydra_plugins.elmo_bench_tasks"}, (sorted(found - _on_disk()),
                                                                       sorted(_on_disk() - found))


def test_a_checkout_imports_its_own_tasks():
    link = REPO / "elmo_bench" / "tasks"
    assert link.is_symlink() and link.resolve() == (REPO / "tasks").resolve()
    import elmo_bench.tasks
    from elmo_bench.tasks.registry import registered

    assert Path(elmo_bench.tasks.__file__).resolve() == (REPO / "tasks" / "__init__.py").resolve()
    assert all(t.resolved_target().startswith("elmo_bench.tasks.") for t in registered().values())
