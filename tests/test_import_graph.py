"""The package's imports point one way: no circles, and no layer imports one above it.

Walks every module of ``elmo_bench`` (and ``tasks/``, installed as ``elmo_bench.tasks``) with ``ast``, imports inside
functions included: an import moved into a function to dodge a circle is still an edge here. So is
``importlib.import_module("a.literal.module")``, and in a module that imports by name, every string literal that
names a project module (``_delegate("elmo_bench.report.cli", ...)``); an ``import_module`` of a computed name is
allowed only in the modules of ``DYNAMIC``, each saying what it imports.
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: layer -> the layers it may import (besides itself). Read bottom-up: base imports nothing of ours; records are the
#: files a run leaves (results.json, lm_adaptation.json and the rules that read them back); data turns files into
#: examples; encoders (with bilm) yield layers per word; modules are nn pieces over them (Elmo, ScalarMix, token
#: embedders, CRF, ...); tasks are the plugins; pretrain trains and adapts biLMs; probe and engine use all of those;
#: report reads records only; commands (the ``elmo-bench`` subcommands, the Hydra glue) sit on top.
LAYERS: dict[str, set[str]] = {
    "base": set(),
    "records": {"base"},
    "identity": {"base", "records"},  # the run-identity rules resume and the report share (issue 54)
    "data": {"base"},
    "encoders": {"base", "data"},  # elmo_bench.bilm belongs here too: the biLM is one encoder kind (SUBPACKAGES)
    "modules": {"base", "records", "data", "encoders"},  # records: the ElmoSettings a token embedder takes whole
    "tasks": {"base", "records", "data", "modules"},
    "pretrain": {"base", "data", "encoders"},
    # report: a probe's report section (elmo_bench/probes/<name>/report.py) renders with the report's table and
    # figure helpers (issue 55: the report's framework names no probe, each probe owns its section); the report
    # never imports a probe (the command hands the sections in, elmo_bench.commands.report)
    "probe": {"base", "records", "data", "encoders", "tasks", "report"},
    "engine": {"base", "records", "identity", "data", "encoders", "modules", "tasks", "pretrain", "probe"},
    "report": {"base", "records", "identity"},
}
LAYERS["commands"] = set(LAYERS) | {"report"}
#: subpackages that share a layer with another: the biLM and the Encoder protocol import each other's way freely
SUBPACKAGES = {"bilm": "encoders"}
#: modules outside any subpackage and the layer they belong to
TOP_LEVEL = {"elmo_bench": "base", "elmo_bench.__main__": "commands"}
#: modules that call ``importlib.import_module`` on a computed name, and what that name can be (it must be a module
#: their layer may import)
DYNAMIC: dict[str, str] = {
    "elmo_bench.engine.experiment": "load_task: a Task class a task declared (tasks layer, below the engine)",
    "elmo_bench.base.registry": "the one plug-in scan (issue 55 item 7): the declaring modules of the package its "
                                "caller names (tasks/, the probes, the encoders), each importing only its own "
                                "layer's modules through it; base itself names none",
    "elmo_bench.commands.main": "the subcommands' modules, each a string literal in the file (edges counted)",
    "elmo_bench.probe.registry": "a declared probe's run function (probe_runner)",
}
#: known upward edges, each with the issue that removes it (none left: issue 28 item 1 took the task knowledge out of
#: the report, which reads per-example statistics from run records)
PENDING: dict[tuple[str, str], str] = {}


def modules() -> dict[str, Path]:
    """Every module name → its source file (``tasks/`` under its installed name ``elmo_bench.tasks``)."""
    found = {}
    for top, root in (("elmo_bench", REPO / "elmo_bench"), ("elmo_bench.tasks", REPO / "tasks")):
        for source in root.rglob("*.py"):  # rglob does not follow the elmo_bench/tasks symlink
            parts = [top, *source.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = source
    return found


def _imports_by_name(node: ast.AST) -> bool:
    """``importlib.import_module(...)`` or ``import_module(...)`` with an argument."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module")


def computed_imports(source: Path) -> list[int]:
    """Lines where ``source`` imports a module whose name is not a literal."""
    return [node.lineno for node in ast.walk(ast.parse(source.read_text(encoding="utf-8")))
            if _imports_by_name(node) and not isinstance(node.args[0], ast.Constant)]


def imports(name: str, source: Path, known: set[str]) -> set[str]:
    """The project modules ``name`` imports anywhere in its file (module level and inside functions)."""
    package = name if source.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    tree = ast.parse(source.read_text(encoding="utf-8"))
    dynamic = any(_imports_by_name(node) for node in ast.walk(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from pkg import mod` imports the module pkg.mod; `from mod import name` the module mod
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        elif _imports_by_name(node) and isinstance(node.args[0], ast.Constant):
            targets = [str(node.args[0].value)]
        elif dynamic and isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
            targets = [node.value]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def layer(name: str) -> str:
    if name in TOP_LEVEL:
        return TOP_LEVEL[name]
    sub = SUBPACKAGES.get(name.split(".")[1], name.split(".")[1])
    assert sub in LAYERS, f"{name}: subpackage {sub!r} has no layer in tests/test_import_graph.py LAYERS"
    return sub


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, source, set(found)) for name, source in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def upward(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            a, b = layer(source), layer(target)
            if a != b and b not in LAYERS[a] and (source, target) not in PENDING:
                bad.append(f"{source} ({a}) imports {target} ({b})")
    return bad


def test_the_walk_sees_the_package():
    edges = graph()
    assert "elmo_bench.engine.experiment" in edges and "elmo_bench.tasks.ner.task" in edges
    assert "elmo_bench.engine.loop" in edges["elmo_bench.engine.experiment"]
    assert "elmo_bench.tasks.api" in edges["elmo_bench.tasks.ner.task"]


def test_no_import_circles():
    found = cycles(graph())
    assert not found, "import circles (function-level imports included):\n" + "\n".join(map(" <-> ".join, found))


def test_no_upward_imports():
    bad = upward(graph())
    assert not bad, "imports against the layers (tests/test_import_graph.py LAYERS):\n" + "\n".join(bad)


def test_pending_exceptions_still_exist():
    """An exception whose edge is gone must leave PENDING, so the list only ever shrinks."""
    edges = graph()
    gone = [pair for pair in PENDING if pair[1] not in edges.get(pair[0], set())]
    assert not gone, f"these edges are gone; delete them from PENDING: {gone}"


def test_the_checker_catches_a_circle_and_an_upward_import():
    edges = {"elmo_bench.base.a": {"elmo_bench.engine.b"}, "elmo_bench.engine.b": {"elmo_bench.base.a"}}
    assert cycles(edges) == [["elmo_bench.base.a", "elmo_bench.engine.b"]]
    assert upward(edges) == ["elmo_bench.base.a (base) imports elmo_bench.engine.b (engine)"]


def test_computed_imports_only_where_declared():
    found = {name: computed_imports(source) for name, source in modules().items()}
    undeclared = [f"{name} line {line}" for name, lines in found.items() if name not in DYNAMIC for line in lines]
    assert not undeclared, "import_module of a computed name (add it to DYNAMIC with what it imports):\n" + \
        "\n".join(undeclared)
    gone = [name for name in DYNAMIC if not found.get(name)]
    assert not gone, f"these modules no longer import by computed name; delete them from DYNAMIC: {gone}"


def test_top_level_entries_exist():
    assert set(TOP_LEVEL) <= set(modules()), f"stale TOP_LEVEL entries: {sorted(set(TOP_LEVEL) - set(modules()))}"


def test_an_importlib_upward_import_is_caught(tmp_path):
    """A planted ``importlib.import_module`` of the engine from base is an upward edge; one of a computed name
    outside DYNAMIC is refused."""
    planted = tmp_path / "planted.py"
    planted.write_text("import importlib\n\n\ndef f(name):\n    importlib.import_module('elmo_bench.engine.loop')\n"
                       "    return importlib.import_module(name)\n")
    edges = {"elmo_bench.base.planted": imports("elmo_bench.base.planted", planted, set(modules()))}
    assert edges["elmo_bench.base.planted"] == {"elmo_bench.engine.loop"}
    assert upward(edges) == ["elmo_bench.base.planted (base) imports elmo_bench.engine.loop (engine)"]
    assert computed_imports(planted) == [6]
