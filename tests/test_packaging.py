"""What `pip install` ships: tasks/ as elmo_bench.tasks (nothing named `tasks` in site-packages), every package folder
listed, and a source checkout importing its own tasks/ through the elmo_bench/tasks symlink."""
from __future__ import annotations

import tomllib
from pathlib import Path

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
    assert all(p == "elmo_bench" or p.startswith("elmo_bench.") for p in config["packages"])
    assert "elmo_bench.tasks" in config["package-data"] and "tasks" not in config["package-data"]


def test_every_package_folder_is_listed():
    listed = set(_setuptools()["packages"])
    assert listed == _on_disk(), (f"pyproject.toml [tool.setuptools] packages: add {sorted(_on_disk() - listed)}, "
                                  f"remove {sorted(listed - _on_disk())}")


def test_a_checkout_imports_its_own_tasks():
    link = REPO / "elmo_bench" / "tasks"
    assert link.is_symlink() and link.resolve() == (REPO / "tasks").resolve()
    import elmo_bench.tasks

    assert Path(elmo_bench.tasks.__file__).resolve() == (REPO / "tasks" / "__init__.py").resolve()
    assert all(target.startswith("elmo_bench.tasks.") for target in elmo_bench.tasks.TASKS.values())
