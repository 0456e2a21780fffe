"""Checks of what the README and docs/*.md tell a user to type, without running any job (tests/test_docs.py).

Rule for a fenced ```bash block: lines ending in ``\\`` join the next; ``#`` starts a comment (shlex); ``&&``, ``;``
and ``||`` split a line into commands; leading ``VAR=value`` words (environment prefixes) are dropped. Then each
command is checked by its first words:

- ``python run.py ARGS``: rewritten as run.py rewrites it (commands.main_args: no ``task=``/``experiment=`` → the
  quickstart), then composed with Hydra's compose API like run.py's job, hydra node included (launcher keys), and
  checked as a run checks it before reading data (run.py's door, engine.config_door, without the file checks). A sweep (``-m``, or an
  experiment that sets ``hydra.mode: MULTIRUN``) is split into jobs by Hydra's basic sweeper, experiment sweep first
  (commands.plan.expand_sweep); the jobs composed are a subset in which every swept ``key=value`` occurs.
- ``elmo-bench SUB ARGS``, ``python -m elmo_bench SUB ARGS``, ``torchrun ... -m elmo_bench SUB ARGS``: parsed by
  that subcommand's own parser (commands.main.COMMANDS[SUB].parse; pretrain and finetune-lm compose their Hydra
  overrides); ``plan``'s overrides are also composed as above.
- ``python -m pytest ARGS``: every test file named exists.
- ``python scripts/X.py`` / ``python bench/X.py``: the file exists; an argparse script's ``--help`` exits 0.
  ``scripts/X.sh`` (or ``bash scripts/X.sh``): the file exists (and is executable when run directly).
- ``pip install -e ".[EXTRA,...]"``: each extra is in pyproject.toml; other pip, apt-get, git, cd, ``python -c``
  and ``python -m venv`` commands are not the project's: accepted unchecked.
- ``. DIR/bin/activate`` (or ``source``): a virtual environment's activation (the README's test command); the
  file must be a venv's ``bin/activate``.
- anything else fails: a new kind of documented command needs a rule here.

What a command needs beyond a fresh clone offline (the README's setup, the shipped biLM and samples,
``../shared/data``, run directories the docs' earlier commands make) is marked where the reader sees it: a trailing
``# needs: WHAT`` comment on its line (``# needs: a GPU``), or ``<!-- docs-run: needs WHAT -->`` on the line before
the fence for every command of the block. Marked commands are still checked here; the leading command of an
unmarked block is never marked (test_docs.py), and scripts/run_documented_commands.py runs every unmarked one.

Links: every ``[text](target)`` and ``![alt](target)`` outside code whose target is not a URL resolves to a file
relative to the markdown file; a ``#fragment`` must be one of the target's headings (GitHub's slugs).
"""
from __future__ import annotations

import ast
import copy
import functools
import importlib
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import tomllib

from tests.warm_python import run_python

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
SHELL = ("bash", "sh", "shell")
#: the line before a ```python block that makes the docs test run it (otherwise its imports are imported)
RUN_MARK = "<!-- docs-test: run -->"
#: the line before a shell block whose commands all need more than a fresh clone offline (a GPU, a cluster, ...)
NEEDS_MARK = re.compile(r"^<!-- docs-run: needs (.+?) -->$")
#: a trailing comment marking one command line as needing more than a fresh clone offline
NEEDS_COMMENT = re.compile(r"#\s*needs:\s*(.+?)\s*$")
ENV_PREFIX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
NOT_OURS = ("apt-get", "apt", "git", "cd", "export", "mkdir", "wget", "curl", "sudo")


@dataclass(frozen=True)
class DocCommand:
    """One command of a fenced shell block: where it is written and its words."""

    path: Path
    line: int
    words: tuple[str, ...]
    env: tuple[str, ...] = ()                  # its ``VAR=value`` prefix words
    needs: str = ""                            # what it needs beyond a fresh clone offline ("": nothing)

    def where(self) -> str:
        return f"{self.path.relative_to(REPO) if self.path.is_relative_to(REPO) else self.path}:{self.line}"


@dataclass(frozen=True)
class Snippet:
    path: Path
    line: int
    code: str
    run: bool


def fenced_blocks(path: Path, languages: Sequence[str]) -> list[tuple[int, str, str]]:
    """(line of the first code line, body, the non-blank line before the fence) of each block in ``languages``."""
    text = path.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        if match.group(1) in languages:
            before = [line for line in text[:match.start()].splitlines() if line.strip()]
            out.append((text.count("\n", 0, match.start(2)) + 1, match.group(2), before[-1].strip() if before else ""))
    return out


def shell_blocks(path: Path) -> list[list[DocCommand]]:
    """The commands of each of ``path``'s shell blocks, continuations joined, comments, chains, env prefixes and
    ``needs`` marks handled."""
    blocks = []
    for first, body, before in fenced_blocks(path, SHELL):
        block_needs = NEEDS_MARK.match(before)
        lines, start, pending, commands = body.splitlines(), None, "", []
        for number, line in enumerate(lines, first):
            start = number if not pending else start
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            logical, pending = pending + line, ""
            mark = NEEDS_COMMENT.search(logical)
            needs = mark.group(1) if mark else block_needs.group(1) if block_needs else ""
            commands += [DocCommand(path, start, words, env, needs)
                         for env, words in _split_chain(shlex.split(logical, comments=True))]
        blocks.append(commands)
    return blocks


def shell_commands(path: Path) -> list[DocCommand]:
    """Every command of ``path``'s shell blocks, in order (one implementation: the docs test and the runner)."""
    return [command for block in shell_blocks(path) for command in block]


def _split_chain(tokens: list[str]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """``a && b; VAR=1 c`` → ((), (a,)), ((), (b,)), (("VAR=1",), (c,)): chains split, environment prefixes apart."""
    commands, words = [], []
    for token in [*tokens, ";"]:
        ends = token in ("&&", "||", ";") or token.endswith(";")
        if token.endswith(";") and token != ";":
            words.append(token[:-1])
        elif not ends:
            words.append(token)
        if ends:
            env = []
            while words and ENV_PREFIX.match(words[0]):
                env.append(words.pop(0))
            if words:
                commands.append((tuple(env), tuple(words)))
            words = []
    return commands


def python_snippets(path: Path) -> list[Snippet]:
    return [Snippet(path, line, body, before == RUN_MARK) for line, body, before in fenced_blocks(path, ("python",))]


# ------------------------------------------------------------------------------------------------------ run.py

def _covering(jobs: list[list[str]]) -> list[list[str]]:
    """The jobs, in order, that each bring a ``key=value`` not seen before: every swept value composed once."""
    seen: set[str] = set()
    chosen = []
    for job in jobs:
        if not set(job) <= seen:
            chosen.append(job)
            seen |= set(job)
    return chosen


def compose_checked(overrides: Sequence[str], multirun: bool = False) -> Any:
    """One job's config as run.py composes it, checked as a run checks it before reading any data."""
    from elmo_bench.commands.compose import compose_job

    return compose_job(list(overrides), files=False, multirun=multirun)  # run.py's door; paths are placeholders


def jobs_of(overrides: Sequence[str], multirun: bool) -> list[list[str]]:
    """The override lists of the jobs a command launches (one without a sweep)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from elmo_bench.commands.compose import compose_job, expand_sweep

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    swept = [o.input_line for o in parsed if o.is_sweep_override()]
    fixed = [o.input_line for o in parsed if not o.is_sweep_override() and o.input_line != "mix=all_modes"]
    mode = compose_job(fixed, check=False).hydra.mode  # an experiment may make itself a sweep (quickstart)
    multirun = multirun or getattr(mode, "name", mode) == "MULTIRUN"
    if swept and not multirun:
        raise ValueError(f"sweep override(s) {swept} without -m: Hydra refuses them")
    return _covering(expand_sweep(list(overrides))) if multirun else [list(overrides)]


def check_run_py(args: Sequence[str]) -> int:
    """``python run.py ARGS`` composed as run.py would run it; returns the number of jobs composed."""
    from elmo_bench.commands.main_args import main_args
    from elmo_bench.commands.probe_sweep_args import probe_sweep_args
    from elmo_bench.engine.encoder_sweep import encoder_sweep_args

    argv = encoder_sweep_args(probe_sweep_args(main_args(["run.py", *args])))[1:]   # as run.py rewrites them
    multirun = any(a in ("-m", "--multirun") for a in argv)
    flags = [a for a in argv if a.startswith("-") and a not in ("-m", "--multirun", "--debug")]
    if flags:
        raise ValueError(f"no rule for run.py flag(s) {flags}")
    jobs = jobs_of([a for a in argv if not a.startswith("-")], multirun)
    for job in jobs:
        compose_checked(job, multirun)
    return len(jobs)


# -------------------------------------------------------------------------------------------------- elmo-bench

def check_elmo_bench(args: Sequence[str]) -> str:
    """``elmo-bench SUB ARGS`` parsed by SUB's parser (plan's overrides composed too); returns SUB."""
    from elmo_bench.commands.main import COMMANDS

    if not args or args[0] not in COMMANDS:
        raise ValueError(f"elmo-bench has no subcommand {args[0] if args else '(none)'!r}")
    try:
        parsed = COMMANDS[args[0]].parse(list(args[1:]))
    except SystemExit as stop:                    # argparse: the one-line error is on stderr
        raise ValueError(f"elmo-bench {args[0]}: arguments refused (exit {stop.code})") from None
    if args[0] == "plan":
        for job in jobs_of(parsed.overrides, multirun=True):
            compose_checked(job)
    return args[0]


# ------------------------------------------------------------------------------------------------------ python

@functools.cache
def _script(path: str) -> str:
    """The script exists; an argparse one's ``--help`` exits 0 (run once per script: guides name one many times)."""
    script = REPO / path
    if not script.is_file():
        raise ValueError(f"no such script {path}")
    if "ArgumentParser" in script.read_text(encoding="utf-8"):
        done = run_python([str(script), "--help"], cwd=REPO, timeout=120, env=_env())
        if done.returncode != 0:
            raise ValueError(f"{path} --help exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return "script"


def _shell_script(path: str, executable: bool) -> str:
    script = REPO / path
    if not script.is_file() or executable and not os.access(script, os.X_OK):
        raise ValueError(f"no {'executable ' if executable else ''}script {path}")
    return "script"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


#: pytest options whose value is the next word (``-n 2``: pytest-xdist's workers)
PYTEST_VALUED = ("-n", "-k", "-m", "-p", "--durations")


def _pytest(args: Sequence[str]) -> str:
    for before, arg in zip(["", *args], args):
        if not arg.startswith("-") and before not in PYTEST_VALUED and not (REPO / arg.split("::")[0]).exists():
            raise ValueError(f"python -m pytest: no such test path {arg}")
    return "pytest"


def _pip(args: Sequence[str]) -> str:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for arg in args:
        match = re.fullmatch(r"\.\[([\w,-]+)\]", arg)
        for extra in (match.group(1).split(",") if match else []):
            if extra not in extras:
                raise ValueError(f"pip install: pyproject.toml has no extra {extra!r} (has {sorted(extras)})")
    return "pip"


#: each override list composed once per test process: the docs repeat commands (README and guides) and a sweep's
#: check composes its fixed overrides several times; a composition depends on nothing else here
_COMPOSED: dict[tuple[str, ...], Any] = {}


def _compose_once(original: Any) -> Any:
    def compose(overrides: Sequence[str]) -> Any:
        key = tuple(overrides)
        if key not in _COMPOSED:
            _COMPOSED[key] = original(list(overrides))
        return copy.deepcopy(_COMPOSED[key])          # callers add keys to what they get

    return compose


#: each config file or ConfigStore node loaded once per test process (Hydra loads every group option again for each
#: composition: a third of its time); keyed by the search path's sources, so another search path loads anew
_LOADED: dict[tuple[Any, ...], Any] = {}


def _load_once(original: Any) -> Any:
    def load_config(repository: Any, config_path: str) -> Any:
        key = (tuple((s.provider, s.path) for s in repository.sources), config_path)
        if key not in _LOADED:
            _LOADED[key] = original(repository, config_path)
        return copy.deepcopy(_LOADED[key])            # Hydra merges into what it loads

    return load_config


def check_command(command: DocCommand) -> str:
    """Check one documented command by the module docstring's rule; returns the kind checked. Errors name the
    file and line. The repository's config files do not change while the docs are checked, so each is loaded once."""
    from unittest import mock

    from hydra._internal.config_repository import ConfigRepository

    from elmo_bench.commands import hydra_setup

    try:
        with mock.patch.object(hydra_setup, "compose_config", _compose_once(hydra_setup.compose_config)), \
                mock.patch.object(ConfigRepository, "load_config", _load_once(ConfigRepository.load_config)):
            return _check(list(command.words))
    except Exception as exc:                      # noqa: BLE001 - every failure is reported with its place
        raise AssertionError(f"{command.where()}: {' '.join(command.words)}\n  {type(exc).__name__}: {exc}") from exc


def _check(words: list[str]) -> str:
    head = words[0]
    if head == "elmo-bench":
        return "elmo-bench " + check_elmo_bench(words[1:])
    if head == "torchrun":
        at = words.index("-m")
        if words[at + 1] != "elmo_bench":
            raise ValueError(f"torchrun of {words[at + 1]!r}: no rule")
        return "elmo-bench " + check_elmo_bench(words[at + 2:])
    if head == "pip":
        return _pip(words[1:])
    if head.startswith("scripts/") or head == "bash" and words[1].startswith("scripts/"):
        return _shell_script(words[0] if head != "bash" else words[1], executable=head != "bash")
    if head in NOT_OURS:
        return "not ours"
    if head in (".", "source"):
        if len(words) != 2 or not words[1].endswith("/bin/activate"):
            raise ValueError(f"{head} {' '.join(words[1:])}: expected a virtual environment's DIR/bin/activate")
        return "venv"
    if head not in ("python", "python3"):
        raise ValueError(f"no rule for a {head!r} command (tests/doc_commands.py)")
    if words[1] == "run.py":
        check_run_py(words[2:])
        return "run.py"
    if words[1] == "-c" or words[1:3] == ["-m", "venv"]:
        return "not ours"
    if words[1] == "-m":
        if words[2] == "elmo_bench":
            return "elmo-bench " + check_elmo_bench(words[3:])
        if words[2] == "pytest":
            return _pytest(words[3:])
        raise ValueError(f"python -m {words[2]}: no rule")
    if words[1].startswith(("scripts/", "bench/")):
        return _script(words[1])
    raise ValueError(f"python {words[1]}: no rule")


# ------------------------------------------------------------------------------------------------------- links

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")


def github_slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, anything but letters, digits, ``_``, ``-`` and spaces dropped
    (so Markdown's backticks and asterisks too), spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {github_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link and image outside code blocks and inline code."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text(encoding="utf-8"))
    text = INLINE_CODE.sub(lambda m: " " * len(m.group(0)), text)
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(text)]


def check_link(path: Path, line: int, target: str) -> bool:
    """True for a checked relative link or image, False for a URL; AssertionError when it does not resolve."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return False
    file_part, _, fragment = target.partition("#")
    resolved = (path.parent / file_part).resolve() if file_part else path
    where = f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}:{line}: link {target}"
    assert resolved.exists(), f"{where}: {resolved} does not exist"
    if fragment and resolved.suffix == ".md":
        assert fragment in headings(resolved), f"{where}: no heading #{fragment} in {resolved.name}"
    return True


# ----------------------------------------------------------------------------------------------------- python

def check_snippet(snippet: Snippet) -> str:
    """A marked snippet runs; any other parses and every name it imports imports. Returns what was done."""
    where = f"{snippet.path.relative_to(REPO) if snippet.path.is_relative_to(REPO) else snippet.path}:{snippet.line}"
    tree = ast.parse(snippet.code, filename=where)
    if snippet.run:
        exec(compile(tree, where, "exec"), {"__name__": "__docs_snippet__"})  # noqa: S102 - our own docs
        return "ran"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name) or _submodule(node.module, alias.name), \
                    f"{where}: {node.module} has no {alias.name}"
    return "imports"


def _submodule(package: str, name: str) -> bool:
    try:
        importlib.import_module(f"{package}.{name}")
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------------------------------------ module paths

DOTTED = re.compile(r"(?<![\w.])elmo_bench(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?(?![\w/])")  # not a file name or schema
#: the walk-through's hypothetical seventh task (docs/adding-a-task.md)
EXAMPLE_MODULES = ("elmo_bench.tasks.polarity",
                   # entry-point groups (a contract for other distributions), no module since the probes' folders
                   # moved into elmo_bench/probe/ (issue 55)
                   "elmo_bench.probes")


def dotted_names(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every ``elmo_bench.x.y`` (or ``elmo_bench.x:Name``) the text names, code blocks included."""
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(0).rstrip(".")) for m in DOTTED.finditer(text)]


def resolve_dotted(name: str) -> Any:
    """The module or attribute ``name`` names: the longest importable module prefix, then attributes."""
    parts = name.replace(":", ".").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute)
        return obj
    raise ModuleNotFoundError(name)
