"""Issue 35: every configuration default is written once, in its dataclass (DataConfig, a task's HeadConfig,
EncoderPart, TrainerConfig, ...), and the code reads the typed value: no ``.get("<key>", <default>)`` (or ``.pop``)
with a default other than None on a configuration mapping (a receiver named ``cfg``, ``config``, ``*_cfg`` or
``*_config``: ``data_cfg``, ``head_cfg``, ``model_cfg``, ``self.cfg``) in ``elmo_bench/`` or ``tasks/`` (reached
through the ``elmo_bench/tasks`` link as well). A default there is a second copy of the dataclass's or the YAML's
value, free to drift from it.

``ALLOWED`` lists what is still there, each with why; it may only shrink: a new fallback fails, and so does a
removed one left on the list. Reading old *records* (results.json, run.json, a cache's metadata) is not
configuration: their receivers are named for the record and are not matched."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

ROOTS = ("elmo_bench", "elmo_bench/tasks")   # the second is a link to ../tasks: followed, named by its target
CONFIG_NAMES = ("cfg", "config")
CONFIG_SUFFIXES = ("_cfg", "_config")
METHODS = ("get", "pop")
#: ``path::call`` → why (none: the tasks' own data keys are typed too, TaskDeclaration.data)
ALLOWED: dict[str, str] = {}


def _config_named(node: ast.expr) -> bool:
    """``cfg``, ``data_cfg``, ``self.model_config``, ...: a name (or attribute) that says it holds configuration."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name in CONFIG_NAMES or name.endswith(CONFIG_SUFFIXES)


def fallbacks(source: str, where: str) -> set[str]:
    """``where::call`` for every ``<config>.get(key, default)`` / ``.pop(key, default)`` whose default is not None."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in METHODS):
            continue
        default = node.args[1] if len(node.args) == 2 else next(
            (k.value for k in node.keywords if k.arg == "default"), None)
        if default is None or (isinstance(default, ast.Constant) and default.value is None):
            continue
        if _config_named(node.func.value):
            found.add(f"{where}::{ast.unparse(node)}")
    return found


def scanned(root: Path = REPO) -> dict[str, Path]:
    """The package's and the tasks' Python files, each once, by their path under the repository."""
    found: dict[str, Path] = {}
    for base in ROOTS:
        for path in sorted((root / base).resolve().rglob("*.py")):
            found.setdefault(path.relative_to(root.resolve()).as_posix(), path)
    return found


def every_fallback(root: Path = REPO) -> set[str]:
    """Every fallback in the package and the tasks, named by its file's path under the repository."""
    found: set[str] = set()
    for where, path in scanned(root).items():
        found |= fallbacks(path.read_text(encoding="utf-8"), where)
    return found


def _allowed(name: str) -> bool:
    return name in ALLOWED


def test_no_configuration_default_is_written_beside_its_dataclass():
    found = every_fallback()
    new = sorted(name for name in found if not _allowed(name))
    assert not new, f"a default on a configuration mapping (write it once, in its dataclass, and read the typed " \
                    f"value): {new}"
    gone = sorted(set(ALLOWED) - found)
    assert not gone, f"converted (or changed): remove from ALLOWED: {gone}"


def test_the_walk_reaches_the_tasks_readers():
    """The scan reads tasks/ (the link's target), where the readers that once held fallbacks live."""
    files = scanned()
    assert {"tasks/pos/reader.py", "elmo_bench/data/srl_conll.py", "tasks/sst/reader.py", "tasks/squad/task.py",
            "elmo_bench/engine/run_config.py"} <= set(files)


def test_the_guard_sees_a_planted_fallback():
    planted = ("def read(cfg, data_cfg, config, head_cfg, record, spec):\n"
               "    a = cfg.get('lr', 0.1)\n"
               "    b = data_cfg.get(MAX_OVERLAP, DEFAULT_MAX_OVERLAP)\n"
               "    c = config.get('encoder') or {'kind': 'bilm'}\n"     # no default argument: not this guard's
               "    d = head_cfg.pop('use_genres', False)\n"
               "    e = data_cfg.get('name', None)\n"                     # None: "absent" is the value
               "    f = record.get('schema', 1)\n"                        # a record read back, not configuration
               "    g = self.model_cfg.get('activation', default='relu')\n"
               "    return spec.get('kind', 'bilm')\n")
    assert fallbacks(planted, "x.py") == {"x.py::cfg.get('lr', 0.1)",
                                          "x.py::data_cfg.get(MAX_OVERLAP, DEFAULT_MAX_OVERLAP)",
                                          "x.py::head_cfg.pop('use_genres', False)",
                                          "x.py::self.model_cfg.get('activation', default='relu')"}


def test_a_planted_fallback_in_a_tree_fails_the_guard(tmp_path):
    """The whole walk on a copy-like tree: a task file reached through the link with one fallback is found."""
    (tmp_path / "tasks" / "demo").mkdir(parents=True)
    (tmp_path / "tasks" / "demo" / "reader.py").write_text("def read(data_cfg):\n"
                                                           "    return data_cfg.get('format', 'conllu')\n")
    (tmp_path / "elmo_bench").mkdir()
    (tmp_path / "elmo_bench" / "tasks").symlink_to("../tasks")
    (tmp_path / "elmo_bench" / "run.py").write_text("def go(run):\n    return run.data.common.max_overlap\n")
    assert every_fallback(tmp_path) == {"tasks/demo/reader.py::data_cfg.get('format', 'conllu')"}
