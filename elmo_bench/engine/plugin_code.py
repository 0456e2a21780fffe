"""The code identity of the other plug-ins and their versions: a probe's code (its folder and the probe machinery
and task readers it imports) and an encoder kind's (its module and the encoder modules it imports), hashed by their
behaviour as a task's is (elmo_bench.engine.code_identity.behaviour); what a recorded code hash stands for
(:func:`plugin_versions`) and the live identity's ``plugin.<kind>`` (:func:`with_plugin`)."""
from __future__ import annotations

import ast
import hashlib
import importlib.util
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.engine.code_identity import (
    CODE_PREFIX,
    DECLARATION_FILE,
    FRAMEWORK_MODULES,
    behaviour,
    task_code_dir,
    task_files,
)
from elmo_bench.identity.manifest import committed

#: the probe framework's surface: its interface, registry, declaration type and shared settings (like the engine,
#: outside every probe's identity)
PROBE_FRAMEWORK = ("elmo_bench.probe.api", "elmo_bench.probe.registry", "elmo_bench.probe.declaration",
                   "elmo_bench.probe.settings", *(f"elmo_bench.tasks.{name}" for name in FRAMEWORK_MODULES))
#: the packages whose modules a probe's code identity follows (its own folder, the shared methods of
#: elmo_bench/probe/lib, task readers)
PROBE_CODE = ("elmo_bench.probe.", "elmo_bench.tasks.")


def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` (a package: its ``__init__.py``), found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin and spec.origin.endswith(".py") else None


def _imported_modules(source: str) -> set[str]:
    """Every absolutely imported module (``from a.b import c``: ``a.b`` and ``a.b.c``) of a module's source."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def probe_code_files(package: str, target: str) -> list[tuple[str, Path]]:
    """The code a probe runs: its folder's modules but its declaration (its settings are in the config), then its
    run function's module (``target``, ``module:function``: a user's probe may name another package's) and every
    module of the probe machinery (elmo_bench.probe.lib) and the tasks that they import, transitively (the framework
    surface, PROBE_FRAMEWORK, left out); (label, file), sorted. A declared variant of a folder (``VARIANTS``) runs
    the folder's code: the same files."""
    root = task_code_dir(package)
    own = [(str(p.relative_to(root)), p) for p in task_files(root)]
    found: dict[str, Path] = {}
    module = target.partition(":")[0]
    start = _module_file(module) if not module.startswith(package + ".") else None
    if start is not None:
        found[module] = start
    _follow([p for _, p in own] + ([start] if start is not None else []), found,
             lambda name, path: name.startswith(PROBE_CODE) and name not in PROBE_FRAMEWORK
             and not name.startswith(package + ".") and path.name != DECLARATION_FILE)
    return own + sorted((f"uses:{name}", path) for name, path in found.items())


def _follow(todo: list[Path], found: dict[str, Path], wanted: Callable[[str, Path], bool]) -> None:
    """Add to ``found`` (module name → file) every module that the files of ``todo`` import, transitively, that
    ``wanted(name, file)`` accepts (the walk of a probe's code and of an encoder kind's)."""
    while todo:
        for name in _imported_modules(todo.pop().read_text(encoding="utf-8")):
            if name in found:
                continue
            path = _module_file(name)
            if path is not None and wanted(name, path):
                found[name] = path
                todo.append(path)


def _behaviour_hash(labelled: Iterable[tuple[str, Path]]) -> str:
    """``CODE_PREFIX`` + sha256 of each (label, file)'s behaviour, in the order given."""
    digest = hashlib.sha256()
    for label, path in labelled:
        digest.update(label.encode() + b"\0" + behaviour(path.read_text(encoding="utf-8")).encode())
    return CODE_PREFIX + digest.hexdigest()[:16]


def probe_code_hash(package: str, target: str) -> str:
    """A probe's code identity (``code.probe``): the behaviour (ASTs without docstrings, imports in one order) of
    :func:`probe_code_files`: a changed metric or reader makes a finished probe run stale; a comment does not."""
    return _behaviour_hash(probe_code_files(package, target))


#: the packages an encoder kind's code identity follows, and the framework's modules left out (the protocol, the
#: registry of kinds, the cache: the cache's bytes have their own key)
ENCODER_CODE = ("elmo_bench.encoders.", "elmo_bench.bilm.")
ENCODER_FRAMEWORK = ("elmo_bench.encoders.kinds", "elmo_bench.encoders.protocol", "elmo_bench.encoders.cache",
                     "elmo_bench.encoders.cache_fill", "elmo_bench.encoders.cache_read", "elmo_bench.encoders.shards",
                     "elmo_bench.encoders.settings")


def encoder_code_hash(module: str) -> str:
    """An encoder kind's code identity (its manifest line): the behaviour of its module and of the modules of
    ``ENCODER_CODE`` it imports, transitively (``ENCODER_FRAMEWORK`` left out)."""
    start = _module_file(module)
    if start is None:
        raise ConfigError(f"encoder module {module!r} not found")
    found: dict[str, Path] = {module: start}
    _follow([start], found, lambda name, path: name.startswith(ENCODER_CODE) and name not in ENCODER_FRAMEWORK)
    return _behaviour_hash(sorted(found.items()))


def plugin_versions(kind: str, name: str, version: int, live: Sequence[str]) -> dict[str, dict[str, dict[str, int]]]:
    """What each code hash a run directory may have recorded for plug-in ``name`` stands for: the committed
    manifest's lines (elmo_bench.identity.manifest), and the live code's hashes (``live``: its AST hash, and for a
    task its bytes hash, which directories before the AST hash recorded) as its declared ``version`` (a plug-in
    outside the manifest, a user's, keeps its runs while its code is unchanged)."""
    listed = dict((committed().get(kind) or {}).get(name) or {})
    listed.update({code: version for code in live})
    return {kind: {name: listed}}


def with_plugin(identity: Mapping[str, Any], kind: str, name: str, version: int) -> dict[str, Any]:
    """A live identity with its plug-in named by version (``plugin.<kind>: name@version``) in place of the code
    hash (``code.<kind>``) it was computed with (results.json's ``plugins`` records the versions)."""
    out = {k: v for k, v in identity.items() if k != f"code.{kind}"}
    out[f"plugin.{kind}"] = f"{name}@{version}"
    return out
