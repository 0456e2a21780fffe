"""Run every command the README and docs/*.md give, offline, in a scratch copy of this checkout, and print pass or
fail per command with its time: the docs test (tests/test_docs.py) only composes them; this runs them.

Usage: python scripts/run_documented_commands.py [DOC ...] [--timeout S] [--keep DIR] [--list] [--readme quickstart]

The commands are the docs test's own (tests/doc_commands.py: shell_commands, one implementation). The scratch copy
is every file git tracks or would track here, with ``shared`` beside it linked to this checkout's ``../shared``
(the data the docs name as ``../shared/data``); the README runs first (its quickstart makes the run directories the
guides use), then each DOC in the order given, all in the same copy, one after the other, each command in the
copy's root with the hub, datasets and wandb offline. A command marked ``# needs: WHAT`` is not run (``needs``),
nor are the setup and system commands (pip, apt-get, git, sudo, wget, curl, ``python -m venv`` and a venv's
activation: ``setup``; the checkout is already installed, and a ``pip install -e .`` in the copy would re-point this
environment's install). A command still
running after ``--timeout`` seconds (default 120; long jobs such as a full sweep) is stopped and counted as
``limit``: it got past the config door and whatever it reads in that time without an error. A command that fails
after an earlier command of the same document was stopped is counted as ``after`` (it may read what the stopped one
did not finish: a report of a sweep cut short), apart from the plain failures, with its error line shown all the
same; run that document again with a longer ``--timeout`` to tell. The quickstart (``python run.py``) and
``pretrain=tiny`` trainings run to the end (up to 30 min): later commands read what they make. Exit 1 when any
failed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.doc_commands import DOC_FILES, DocCommand, shell_commands  # noqa: E402 - the repo on sys.path first

SETUP = ("pip", "apt-get", "apt", "git", "sudo", "wget", "curl", ".", "source")
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "offline"}


@dataclass(frozen=True)
class Outcome:
    """What running one documented command gave: ``pass``, ``fail``, ``limit``, ``after`` (failed after a stopped
    command of its document), ``needs``, ``setup`` or ``skip`` (a README command ``--readme quickstart`` leaves
    out)."""

    command: DocCommand
    status: str
    seconds: float
    detail: str = ""

    def line(self) -> str:
        said = f"  ({self.detail})" if self.detail else ""
        return f"{self.status.upper():5} {self.seconds:7.1f} s  {self.command.where()}: {' '.join(self.command.words)}{said}"


def scratch_copy(into: Path) -> Path:
    """This checkout's git files (tracked, or untracked and not ignored) copied to ``into/elmo_bench``, and
    ``into/shared`` linked to ``../shared`` when there is one: a fresh clone beside the shared data."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    root = into / "elmo_bench"
    for name in filter(None, listed):
        source, target = REPO / name, root / name
        if source.is_symlink() or source.is_file():   # links as links (elmo_bench/tasks -> ../tasks)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    if (REPO.parent / "shared").is_dir():
        (into / "shared").symlink_to((REPO.parent / "shared").resolve())
    return root


def argv_of(command: DocCommand) -> list[str]:
    """The words to execute: ``elmo-bench`` and ``python`` through this interpreter (the copy's code first)."""
    words = list(command.words)
    if words[0] == "elmo-bench":
        return [sys.executable, "-m", "elmo_bench", *words[1:]]
    if words[0] in ("python", "python3"):
        return [sys.executable, *words[1:]]
    return words


def environment(root: Path, command: DocCommand) -> dict[str, str]:
    env = {**os.environ, **OFFLINE, "PYTHONPATH": str(root)}
    env.update(word.split("=", 1) for word in command.env)
    return env


#: the longest a command that must finish may run
FINISH_SECONDS = 1800.0


def must_finish(command: DocCommand) -> bool:
    """The quickstart and tiny pretrainings: a few minutes at most, and later commands use their run or model."""
    return command.words == ("python", "run.py") or "pretrain=tiny" in command.words


def skipped_readme(command: DocCommand, readme: str) -> bool:
    """True for a README command ``--readme quickstart`` leaves out: all but those that run to the end (the
    quickstart, whose runs the guides use, and a tiny pretraining), so that a second run of some guides does not spend the README's half hour again."""
    return readme == "quickstart" and command.path == REPO / "README.md" and not must_finish(command)


def run_one(command: DocCommand, root: Path, timeout: float, readme: str = "all") -> Outcome:
    """Run one command in ``root`` (not the marked, setup or system ones); a run past ``timeout`` is stopped."""
    if skipped_readme(command, readme):
        return Outcome(command, "skip", 0.0, "not run: --readme quickstart")
    if command.needs:
        return Outcome(command, "needs", 0.0, command.needs)
    if command.words[0] in SETUP or command.words[0] in ("python", "python3") and command.words[1:3] == ("-m", "venv"):
        return Outcome(command, "setup", 0.0, "not run: setup or system command")
    timeout = max(timeout, FINISH_SECONDS) if must_finish(command) else timeout
    start = time.monotonic()
    try:
        child = subprocess.Popen(argv_of(command), cwd=root, env=environment(root, command), text=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return Outcome(command, "fail", time.monotonic() - start, str(exc))
    try:
        _, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(child)
        return Outcome(command, "limit", time.monotonic() - start, f"still running after {timeout:g} s, stopped")
    seconds = time.monotonic() - start
    if child.returncode == 0:
        return Outcome(command, "pass", seconds)
    last = [line for line in err.splitlines() if line.strip()][-1:] or [""]
    return Outcome(command, "fail", seconds, f"exit {child.returncode}: {last[0][-300:]}")


def _stop(child: subprocess.Popen) -> None:
    """SIGTERM to the command's own process group (its workers too), SIGKILL after 15 s."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
        try:
            os.killpg(child.pid, sig)
            child.communicate(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


def after_a_stop(outcome: Outcome, earlier: list[Outcome]) -> Outcome:
    """A failure that follows a command of its document stopped at the limit is ``after``, naming that command."""
    stopped = [o for o in earlier if o.status == "limit" and o.command.path == outcome.command.path]
    if outcome.status != "fail" or not stopped:
        return outcome
    return Outcome(outcome.command, "after", outcome.seconds,
                   f"{outcome.detail}; after {stopped[-1].command.where()} was stopped")


def documents(names: list[str]) -> list[Path]:
    """The docs to run, the README first (its quickstart makes the run directories the guides use)."""
    chosen = [(REPO / name).resolve() for name in names] if names else list(DOC_FILES)
    unknown = [str(p) for p in chosen if p not in DOC_FILES]
    if unknown:
        raise SystemExit(f"error: not a documented file (README.md or docs/*.md): {', '.join(unknown)}")
    readme = REPO / "README.md"
    return [readme, *[p for p in chosen if p != readme]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("docs", nargs="*", help="README.md and docs/*.md files (default: all; the README always)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a command may run (default 120)")
    parser.add_argument("--keep", metavar="DIR", help="make the scratch copy in DIR and keep it")
    parser.add_argument("--list", action="store_true", help="print what would run, run nothing")
    parser.add_argument("--readme", choices=("all", "quickstart"), default="all",
                        help="the README's commands to run first: all (default), or only those that run to the end (the quickstart)")
    args = parser.parse_args(argv)
    commands = [c for doc in documents(args.docs) for c in shell_commands(doc)]
    if args.list:
        for c in commands:
            print(f"{'needs: ' + c.needs if c.needs else 'setup' if c.words[0] in SETUP else 'run'}\t{c.where()}: "
                  f"{' '.join(c.words)}")
        return 0
    into = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="documented_"))
    root, outcomes = scratch_copy(into), []
    try:
        for command in commands:
            outcomes.append(after_a_stop(run_one(command, root, args.timeout, args.readme), outcomes))
            print(outcomes[-1].line(), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(into, ignore_errors=True)
    counts = {s: sum(o.status == s for o in outcomes) for s in ("pass", "limit", "fail", "after", "needs", "setup",
                                                              "skip")}
    print(f"{len(outcomes)} commands in {sum(o.seconds for o in outcomes):.0f} s: "
          + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
