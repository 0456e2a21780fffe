"""Where a plug-in's name is written (issue 55, "one plug-in, one folder"): every string constant of the package's
Python source that equals a registered name, every import of a plug-in's module, and every YAML file of ``conf/``
that a plug-in's name spells (its file name or a value), outside that plug-in's own folder.

Docs, tests, bench, scripts and ``conf/experiment/`` (presets that list what they run) are exempt. A string that only
happens to spell a name (a data format's field, e.g. the ``pos`` attribute of an XML element) is marked on its line
with ``# not a plug-in name: <why>`` (:data:`NOT_A_NAME`) and not counted; the reason is read in review. Used by
tests/test_plugin_names.py; ``python tests/plugin_names.py`` prints every place found, one per line.

Three uses of a string name something else than the plug-in that shares its spelling, and are not counted:

* **a config group's key.** A name that is also a config group of ``conf/`` (``conf/<name>/``: the ``bilm`` group,
  the biLM's options and weights files, is spelled as the ``bilm`` encoder kind) used as a mapping key: a
  subscript (``cfg["bilm"]``), the key argument of ``.get``/``.pop``/``.setdefault``, a key of a dict display
  (``{"bilm": ...}``, results.json's and plan's ``bilm`` sections), an item of a module-level tuple of keys (a name
  ending in ``_KEYS``: a record's required keys), and in YAML a mapping key. The key names the group and the record
  sections after it (contracts: config keys, printed JSON keys), not the plug-in.
* **the config door's defaults.** The values of conf/config.yaml's defaults list (``encoder: bilm``) pick the option
  a run gets when the command line names none: the door must name them (tests hold them to what the plug-ins
  declare, e.g. the encoder kind that declares ``default``).
* **the compatibility rules** (``HISTORY``: elmo_bench/identity/history.py, "what records written by older versions
  hold", which issue 55 leaves to the run-identity issue). Their constants are facts about records already written
  (a record that names no encoder kind is the biLM's: ``LEGACY_KIND``); they cannot follow a plug-in's rename, and
  every other module reads them from there.
"""
from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
#: the source a name may not leave its folder into (besides the plug-in folders themselves)
SCANNED = ("elmo_bench", "tasks", "run.py", "conf")
EXEMPT_CONF = ("conf/experiment",)
#: the comment that marks a line's string as spelling a plug-in's name by coincidence (a data field), with a reason
NOT_A_NAME = re.compile(r"#\s*not a plug-in name:\s*\S")
#: the primary config, whose defaults list names each group's default option
PRIMARY = "conf/config.yaml"
#: the methods whose first argument is a mapping key
KEY_METHODS = ("get", "pop", "setdefault")
#: the module of the compatibility rules for older records (see the module docstring)
HISTORY = ("elmo_bench/identity/history.py",)


def config_groups() -> set[str]:
    """The config groups of ``conf/`` (its folders)."""
    return {path.name for path in (REPO / "conf").iterdir() if path.is_dir()}


def key_constants(tree: ast.AST) -> set[int]:
    """``id`` of every string constant of ``tree`` used as a mapping key: a subscript, the first argument of
    ``.get``/``.pop``/``.setdefault``, a key of a dict display."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            found.add(id(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in KEY_METHODS \
                and node.args and isinstance(node.args[0], ast.Constant):
            found.add(id(node.args[0]))
        elif isinstance(node, ast.Dict):
            found |= {id(key) for key in node.keys if isinstance(key, ast.Constant)}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple) and any(
                isinstance(target, ast.Name) and target.id.endswith("_KEYS") for target in node.targets):
            found |= {id(item) for item in node.value.elts if isinstance(item, ast.Constant)}
    return found


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
    groups = config_groups()
    found: list[Place] = []
    for path in python_files():
        relative = str(path.relative_to(REPO))
        if relative in HISTORY:
            continue
        source = path.read_text(encoding="utf-8")
        marked = {number for number, line in enumerate(source.splitlines(), 1) if NOT_A_NAME.search(line)}
        tree = ast.parse(source)
        keys = key_constants(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in allowed \
                    and not _inside(path, allowed[node.value]) and node.lineno not in marked \
                    and not (node.value in groups and id(node) in keys):
                found.append(Place(relative, node.lineno, node.value, f"{owner[node.value]}: string"))
            for module in _module_names(node):
                for prefix, plugin in prefixes.items():
                    if (module == prefix or module.startswith(prefix + ".")) and not _inside(path, folders[plugin]):
                        found.append(Place(relative, node.lineno, module, f"{plugin}: import"))
    for path in yaml_files():
        relative = str(path.relative_to(REPO))
        stems = [name for name in allowed if path.stem == name or path.stem.endswith("_" + name)]
        node = yaml.safe_load(path.read_text(encoding="utf-8"))
        if relative == PRIMARY and isinstance(node, dict):
            node = {key: value for key, value in node.items() if key != "defaults"}
        spelled = [(stem, "conf file") for stem in stems] + [
            (value, "conf value") for value in _yaml_strings(node, groups)]
        found += [Place(relative, 1, name, f"{owner[name]}: {how}") for name, how in spelled
                  if name in allowed and not _inside(path, allowed[name])]
    return found


def _yaml_strings(node, groups: set[str]) -> list[str]:
    """Every string of a YAML document, but mapping keys that name a config group."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for key, value in node.items()
                for s in ([] if key in groups else _yaml_strings(key, groups)) + _yaml_strings(value, groups)]
    if isinstance(node, list):
        return [s for item in node for s in _yaml_strings(item, groups)]
    return []


def probe_places() -> list[Place]:
    """Probe names and record tasks outside ``elmo_bench/probe/<name>/`` (the folder its declaration's package is);
    a task of the same name (task pos, probe pos) writes it in its own folder ``tasks/<name>/`` too."""
    from elmo_bench.probe.registry import registered_probes
    from elmo_bench.tasks.registry import registered

    declared = registered_probes()
    tasks = registered()
    names = {name: {name, d.record_task} for name, d in declared.items()}
    folders = {name: [_folder(d.package)] + ([_folder(tasks[name].package)] if name in tasks else [])
               for name, d in declared.items()}
    modules = {name: [d.package] for name, d in declared.items()}
    return places(names, folders, modules)


def encoder_places() -> list[Place]:
    """Encoder kind names outside the kind's own module (or folder), and the packages it declares as its own code
    (``EncoderKind.packages``: the biLM kind's elmo_bench.bilm, the model it loads)."""
    import importlib

    from elmo_bench.encoders.kinds import DECLARATION, encoder_kinds

    kinds = encoder_kinds()
    folders: dict[str, list[Path]] = {}
    for name, kind in kinds.items():
        owner = _owner_of(name, DECLARATION, importlib)
        folders[name] = [owner.parent if owner.name == "__init__.py" else owner,
                         *(_folder(package) for package in kind.packages)]
    return places({name: {name} for name in kinds}, folders, {})


def _owner_of(kind: str, declaration: str, importlib) -> Path:
    """The file whose module declares encoder kind ``kind`` (a module of the package, or a folder's __init__)."""
    import pkgutil

    import elmo_bench.encoders as encoders_package

    for info in pkgutil.iter_modules(encoders_package.__path__, encoders_package.__name__ + "."):
        spec = importlib.util.find_spec(info.name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        declares = re.search(rf"^{declaration} = ", Path(spec.origin).read_text(encoding="utf-8"), re.MULTILINE)
        if declares and getattr(importlib.import_module(info.name), declaration).name == kind:
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
