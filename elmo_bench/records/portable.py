"""Records never hold a machine's absolute path: each is written relative to the repository (when inside it or
beside it: the shared data) or else to the run directory, and, where a record is read back to run again (a task
run's run.json: ``elmo-bench evaluate``), made absolute again from the base each path was written against."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.paths import REPO

#: the two bases a relative path in a record is written against
REPOSITORY, RUN = "repository", "run"


def _relative(text: str, run_dir: Path) -> tuple[str, str]:
    """(the path relative to its base, the base's name)."""
    target = Path(text).resolve()
    if target.is_relative_to(REPO.parent):
        return os.path.relpath(target, REPO), REPOSITORY
    return os.path.relpath(target, run_dir.resolve()), RUN


def is_absolute_path(value: Any) -> bool:
    return isinstance(value, str) and os.path.isabs(value) and "\n" not in value


def portable_bases(tree: Any, run_dir: Path, where: str = "") -> tuple[Any, dict[str, str]]:
    """``tree`` with every absolute path made relative (see the module docstring), and the base of each rewritten
    value by its dotted key (list items as ``key[i]``)."""
    bases: dict[str, str] = {}

    def walk(node: Any, key: str) -> Any:
        if isinstance(node, Mapping):
            return {k: walk(v, f"{key}.{k}" if key else str(k)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, f"{key}[{i}]") for i, v in enumerate(node)]
        if is_absolute_path(node):
            node, bases[key] = _relative(node, run_dir)
        return node

    return walk(tree, where), bases


def portable(tree: Any, run_dir: Path) -> Any:
    """``tree`` with every absolute path made relative: to the repository when inside it or beside it (shared
    data), else to the run directory. Records never hold a machine's absolute path."""
    return portable_bases(tree, run_dir)[0]


def absolute(tree: Any, bases: Mapping[str, str], run_dir: Path) -> Any:
    """:func:`portable_bases` undone: each value ``bases`` names joined to its base again (the repository this
    code runs from, or ``run_dir``, where the record is now)."""
    roots = {REPOSITORY: REPO, RUN: run_dir}

    def walk(node: Any, key: str) -> Any:
        if isinstance(node, Mapping):
            return {k: walk(v, f"{key}.{k}" if key else str(k)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, f"{key}[{i}]") for i, v in enumerate(node)]
        if key in bases and isinstance(node, str) and bases[key] in roots:
            return os.path.normpath(roots[bases[key]] / node)
        return node

    return walk(tree, "")
