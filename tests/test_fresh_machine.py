"""Issue 56: a new machine passes. Every third-party module a test imports is declared (a dependency or the dev
extra), every dev requirement is bounded below its next major version, .ci/run builds a new venv and runs the
README's test command exactly as written, and the README's layout names every probe."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import tomllib

from tests.doc_commands import shell_blocks

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
FIRST_PARTY = {"elmo_bench", "tasks", "tests", "hydra_plugins", "bench", "scripts"}
#: test-only packages whose tests skip without them (pytest.importorskip), never in the extra: where and why
OPTIONAL = {"elmoformanylangs": "tests/test_encoder_manylangs.py: pip install --no-deps elmoformanylangs "
                                "overrides==3.1.0 (its own pins are from 2019)"}


def normal(name: str) -> str:
    """A distribution name as pip compares them (PEP 503: case and runs of -_. are one)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normal(re.match(r"[A-Za-z0-9._-]+", requirement).group(0))


def declared() -> set[str]:
    """The distributions a ``pip install -e ".[dev]"`` asks for by name."""
    return {requirement_name(r) for r in [*PROJECT["dependencies"], *PROJECT["optional-dependencies"]["dev"]]}


def imported_modules(root: Path = REPO / "tests") -> dict[str, str]:
    """Top-level third-party module → the first ``file:line`` importing it, over every test file: absolute imports
    that are neither the standard library, the project's own packages, nor the test or bench folders' own modules
    (tests put those folders on sys.path)."""
    local = {p.stem for folder in (root, REPO / "bench") for p in folder.rglob("*.py")} | \
        {p.name for p in root.rglob("*") if p.is_dir()}
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in FIRST_PARTY | local and top != "__future__":
                    found.setdefault(top, f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def test_every_module_the_tests_import_is_declared():
    """A module that only arrives as another package's dependency (PyYAML through OmegaConf) can vanish with that
    package's next release: each is declared where the tests use it."""
    from importlib.metadata import packages_distributions

    owners, wanted = packages_distributions(), declared()
    found = imported_modules()
    assert {"torch", "pytest", "yaml", "transformers"} <= set(found)     # the walk finds imports
    missing = [f"{where}: {module} (from {sorted(owners.get(module, [])) or 'nothing installed'})"
               for module, where in sorted(found.items()) if module not in OPTIONAL
               and not {normal(d) for d in owners.get(module, [])} & wanted]
    assert not missing, "imported by tests but declared nowhere (add to pyproject's dev extra):\n" + "\n".join(missing)


def test_the_walk_sees_an_undeclared_import(tmp_path):
    (tmp_path / "test_x.py").write_text("import os\nimport yaml\nfrom helper import f\nfrom moto.core import x\n")
    (tmp_path / "helper.py").write_text("def f(): pass\n")
    assert {m: w.rsplit(":", 1)[1] for m, w in imported_modules(tmp_path).items()} == {"yaml": "2", "moto": "4"}


def test_every_dev_requirement_has_an_upper_bound_below_the_next_major():
    """A lower bound and ``<N`` (a major version: the next one after the release the suite was run with), or an
    exact ``==``: a fresh venv never gets a major release that may remove what the tests use (pytest 9.2 already
    refused a test's nested approx, issue 56)."""
    dev = PROJECT["optional-dependencies"]["dev"]
    assert {"pytest", "pytest-xdist", "ruff"} <= {requirement_name(r) for r in dev}
    for requirement in dev:
        exact = re.fullmatch(r"[\w.-]+==[\d.]+", requirement)
        ranged = re.fullmatch(r"[\w.-]+>=[\d.]+,<\d+(\.0)*", requirement)
        assert exact or ranged, f"{requirement}: expected NAME>=X.Y,<N (N the next major) or NAME==X.Y.Z"


def test_ci_makes_a_new_venv_and_runs_the_readmes_test_command():
    """The README's test line, character for character, is .ci/run's command: CI cannot test something else."""
    readme = REPO / "README.md"
    [block] = [b for b in shell_blocks(readme) if any(c.words[:3] == ("python", "-m", "pytest") for c in b)]
    line = readme.read_text().splitlines()[block[0].line - 1]
    assert [" ".join(c.words[:3]) for c in block] == ["python -m venv", ". .venv/bin/activate", "pip install -q",
                                                      "python -m pytest"]
    ci = [text for text in (REPO / ".ci" / "run").read_text().splitlines() if text and not text.startswith("#")]
    assert ci == ["set -euo pipefail", 'cd "$(dirname "$0")/.."', line]
    assert "--clear" in line and ".venv/" in (REPO / ".gitignore").read_text().splitlines()


def test_the_readme_layout_names_every_probe():
    text = (REPO / "README.md").read_text()
    listed = re.search(r"one folder per probe \(([^)]*)\)", text).group(1)
    on_disk = sorted(p.name for p in (REPO / "elmo_bench" / "probe").iterdir() if (p / "config.py").exists())
    assert [name.strip() for name in listed.replace("\n", " ").split(",")] == on_disk
