"""Rewrite the README's quickstart table from a real run of the quickstart, so the README shows what it prints.

Usage: python scripts/update_readme_quickstart.py [--from-output FILE]

Runs ``python run.py`` (the README's main command) with its results and activation cache in a temporary
directory (a fresh run: nothing of ``results/`` is reused or touched), takes the table the quickstart prints at
its end (elmo_bench.commands.hydra_callbacks.results_table) and puts it verbatim between the README's markers.
``--from-output FILE`` takes the table from a saved stdout of that command instead of running it.
tests/test_readme_quickstart.py checks that the block has exactly the printer's shape.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
BEGIN = "<!-- quickstart-table: begin (scripts/update_readme_quickstart.py writes this block) -->"
END = "<!-- quickstart-table: end -->"
HEADER = "| task | embedder | seed | metric | dev | test | time | ELMo layer weights |"


def printed_table(output: str) -> str:
    """The results table at the end of the quickstart's stdout: its header line and the table lines after it."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == HEADER]
    if not starts:
        raise SystemExit("error: the quickstart's output has no results table (was the run interrupted?)")
    table = []
    for line in lines[starts[-1]:]:
        if not line.startswith("|"):
            break
        table.append(line.rstrip())
    return "\n".join(table)


def readme_block(text: str) -> str:
    """The table between the README's markers (inside its code fence)."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise SystemExit(f"error: {README}: expected one {BEGIN!r} and one {END!r}")
    inside = text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")
    lines = inside.splitlines()
    if len(lines) < 2 or lines[0] != "```" or lines[-1] != "```":
        raise SystemExit(f"error: {README}: the quickstart block is not one fenced code block")
    return "\n".join(lines[1:-1])


def with_block(text: str, table: str) -> str:
    head, rest = text.split(BEGIN, 1)
    return f"{head}{BEGIN}\n```\n{table}\n```\n{END}{rest.split(END, 1)[1]}"


def run_quickstart() -> str:
    with tempfile.TemporaryDirectory(prefix="quickstart_") as tmp:
        cmd = [sys.executable, "run.py", f"paths.results_dir={tmp}/results", f"paths.cache_dir={tmp}/cache"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: the quickstart exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from-output", metavar="FILE", help="a saved stdout of `python run.py` instead of a run")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from elmo_bench.base.atomic import atomic_write_text

    output = Path(args.from_output).read_text(encoding="utf-8") if args.from_output else run_quickstart()
    table = printed_table(output)
    text = README.read_text(encoding="utf-8")
    before = readme_block(text)
    if before == table:
        print("README quickstart table unchanged")
        return 0
    atomic_write_text(README, with_block(text, table))
    print(f"README quickstart table rewritten ({len(output.splitlines())} lines of output)\nbefore:\n{before}\n"
          f"after:\n{table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
