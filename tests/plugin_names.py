"""Where a plug-in's name is written (issue 55, "one plug-in, one folder"): every string constant of the package's
Python source that equals a registered name, every import of a plug-in's module, and every YAML file of ``conf/``
that a plug-in's name spells (its file name or a value), outside that plug-in's own folder.

Docs, tests, bench, scripts and ``conf/experiment/`` (presets that list what they run) are exempt. Used by
tests/test_plugin_names.py; ``python tests/plugin_names.py`` prints every place found, one per line.
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
#: the source a name may not leave its folder into (besides the plug-in folders themselves)
SCANNED = ("elmo_bench", "tasks", "run.py", "conf")
EXEMPT_CONF = ("conf/experiment",)


@dataclass(frozen=True)
class Place:
    """One place that names a plug-in outside its folder."""

    path: str
    line: int
    name: str
    how: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.how} {self.name!r}"


def python_files() -> list[Path]:
    found: list[Path] = []
    for top in SCANNED:
        where = REPO / top
        found += [where] if where.is_file() else sorted(where.rglob("*.py")) if where.is_dir() else []
    return found


def yaml_files() -> list[Path]:
    return [path for path in sorted((REPO / "conf").rglob("*.yaml"))
            if not any(str(path.relative_to(REPO)).startswith(exempt) for exempt in EXEMPT_CONF)]


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path.is_relative_to(folder) for folder in folders)


def _module_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return []


def places(names: dict[str, set[str]], folders: dict[str, list[Path]], modules: dict[str, list[str]]) -> list[Place]:
    """Every place that writes one of ``names[plugin]`` (strings) or imports one of ``modules[plugin]`` (module
    prefixes) outside the folders of every plug-in that spells that string (a task and a probe may share a name:
    each may write it in its own folder)."""
    allowed: dict[str, list[Path]] = {}
    owner: dict[str, str] = {}
    for plugin, spelled in names.items():
        for name in spelled:
            allowed.setdefault(name, []).extend(folders[plugin])
            owner.setdefault(name, plugin)
    prefixes = {prefix: plugin for plugin, listed in modules.items() for prefix in listed}
    found: list[Place] = []
    for path in python_files():
        relative = str(path.relative_to(REPO))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in allowed \
                    and not _inside(path, allowed[node.value]):
                found.append(Place(relative, node.lineno, node.value, f"{owner[node.value]}: string"))
            for module in _module_names(node):
                for prefix, plugin in prefixes.items():
                    if (module == prefix or module.startswith(prefix + ".")) and not _inside(path, folders[plugin]):
                        found.append(Place(relative, node.lineno, module, f"{plugin}: import"))
    for path in yaml_files():
        relative = str(path.relative_to(REPO))
        stems = [name for name in allowed if path.stem == name or path.stem.endswith("_" + name)]
        spelled = [(stem, "conf file") for stem in stems] + [
            (value, "conf value") for value in _yaml_strings(yaml.safe_load(path.read_text(encoding="utf-8")))]
        found += [Place(relative, 1, name, f"{owner[name]}: {how}") for name, how in spelled
                  if name in allowed and not _inside(path, allowed[name])]
    return found


def _yaml_strings(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for key, value in node.items() for s in _yaml_strings(key) + _yaml_strings(value)]
    if isinstance(node, list):
        return [s for item in node for s in _yaml_strings(item)]
    return []


def probe_places() -> list[Place]:
    """Probe names and record tasks outside ``elmo_bench/probe/<name>/`` (the folder its declaration's package is)."""
    from elmo_bench.probe.registry import registered_probes

    declared = registered_probes()
    names = {name: {name, d.record_task} for name, d in declared.items()}
    folders = {name: [_folder(d.package)] for name, d in declared.items()}
    modules = {name: [d.package] for name, d in declared.items()}
    return places(names, folders, modules)


def encoder_places() -> list[Place]:
    """Encoder kind names outside the kind's own module (or folder)."""
    import importlib

    from elmo_bench.encoders.kinds import DECLARATION, encoder_kinds

    kinds = encoder_kinds()
    folders: dict[str, list[Path]] = {}
    for name in kinds:
        owner = _owner_of(name, DECLARATION, importlib)
        folders[name] = [owner.parent if owner.name == "__init__.py" else owner]
    return places({name: {name} for name in kinds}, folders, {})


def _owner_of(kind: str, declaration: str, importlib) -> Path:
    import pkgutil

    import elmo_bench.encoders as encoders_package

    for info in pkgutil.walk_packages(encoders_package.__path__, encoders_package.__name__ + "."):
        spec = importlib.util.find_spec(info.name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        text = Path(spec.origin).read_text(encoding="utf-8")
        if f"{declaration} = " in text and f'"{kind}"' in text.split(f"{declaration} = ", 1)[1][:200]:
            return Path(spec.origin)
    raise LookupError(f"no module declares encoder kind {kind!r}")


def task_places() -> list[Place]:
    """Task names outside ``tasks/<name>/`` (and outside the folder of a probe of the same name, which names
    itself there: probe pos's folder writes "pos" as the probe's name, not the task's)."""
    from elmo_bench.probe.registry import registered_probes
    from elmo_bench.tasks.registry import registered

    declared, probes = registered(), registered_probes()
    folders = {name: [_folder(d.package)] for name, d in declared.items()}
    modules = {name: [d.package] for name, d in declared.items()}
    names = {name: {name} for name in declared}
    for name in set(declared) & set(probes):
        names[f"probe {name}"], folders[f"probe {name}"] = {name}, [_folder(probes[name].package)]
    return [p for p in places(names, folders, modules) if not p.how.startswith("probe ")]


def _folder(package: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    return Path(list(spec.submodule_search_locations)[0]).resolve()


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    chosen = sys.argv[1:] or ["probe", "encoder", "task"]
    for kind in chosen:
        found = {"probe": probe_places, "encoder": encoder_places, "task": task_places}[kind]()
        print(f"# {kind}: {len(found)} places")
        for place in found:
            print(place)
