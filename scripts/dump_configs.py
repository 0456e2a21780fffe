"""Every resolved config the repository composes, as one JSON file: for moving YAML between config folders (issue 55
item 6, the tasks' YAML into tasks/<name>/conf/) with the proof that nothing composed changed.

Dumped, each under a key naming its overrides: every task with no option, ``budget=cpu``, ``budget=full``,
``head=paper``, ``head=paper`` with its paper data, ``experiment=paper_table1``, and every data option of conf/ and
of the task folders; every ``python run.py`` and ``elmo-bench plan`` command of README.md and docs/*.md
(tests/doc_commands.py); every job of every conf/experiment preset. Each entry is the job's config resolved
(paths as placeholders where a file is missing), its Hydra choices and what run.py's door says (``ok`` or the
error's one line); a config that does not compose is its error line.

    python scripts/dump_configs.py /tmp/before.json      # before the move
    python scripts/dump_configs.py /tmp/after.json       # after it
    diff /tmp/before.json /tmp/after.json                # nothing
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: what is composed for every task beside its defaults
TASK_VARIANTS = (["budget=cpu"], ["budget=full"], ["head=paper"], ["experiment=paper_table1"])


def one_job(overrides: Sequence[str]) -> dict[str, Any]:
    """The resolved config, Hydra's choices and the door's verdict of one job (or the error it does not compose
    with)."""
    from omegaconf import OmegaConf, open_dict

    from elmo_bench.commands.compose import compose_job
    from elmo_bench.commands.hydra_setup import compose_config

    try:
        cfg = compose_config(list(overrides))
        choices = {k: v for k, v in cfg.hydra.runtime.choices.items() if not k.startswith("hydra")}
        with open_dict(cfg):
            del cfg["hydra"]
        resolved = OmegaConf.to_container(cfg, resolve=True)
    except Exception as failed:  # noqa: BLE001 - a config that does not compose is recorded, not raised
        return {"error": f"{type(failed).__name__}: {str(failed).splitlines()[0] if str(failed) else ''}"}
    try:
        compose_job(list(overrides), files=False)
        door = "ok"
    except Exception as refused:  # noqa: BLE001 - the door's verdict is part of what is compared
        door = f"{type(refused).__name__}: {str(refused).splitlines()[0] if str(refused) else ''}"
    return {"config": resolved, "choices": choices, "door": door}


def data_options() -> list[str]:
    """Every option of the ``data`` group, in conf/ or in a task's folder (the union of before and after a move)."""
    from elmo_bench.tasks.registry import conf_dirs

    folders = [REPO / "conf" / "data", *(directory / "data" for directory in conf_dirs())]
    names = {path.stem for folder in folders if folder.is_dir() for path in folder.glob("*.yaml")}
    return sorted(names - {"schema", "common"})


def task_jobs() -> dict[str, list[str]]:
    """Every task × its variants and every data option."""
    from elmo_bench.tasks.registry import registered

    jobs: dict[str, list[str]] = {}
    options = data_options()
    for task in sorted(registered()):
        for extra in ([], *TASK_VARIANTS, ["head=paper", f"data=paper_{task}"]):
            jobs[" ".join([f"task={task}", *extra])] = [f"task={task}", *extra]
        for option in options:
            jobs[f"task={task} data={option}"] = [f"task={task}", f"data={option}"]
    return jobs


def documented_jobs() -> dict[str, list[str]]:
    """The jobs of every documented ``python run.py`` and ``elmo-bench plan`` command (tests/doc_commands.py)."""
    from elmo_bench.commands.main import COMMANDS
    from elmo_bench.commands.main_args import main_args
    from elmo_bench.commands.probe_sweep_args import probe_sweep_args
    from elmo_bench.engine.encoder_sweep import encoder_sweep_args
    from tests.doc_commands import DOC_FILES, jobs_of, shell_commands

    jobs: dict[str, list[str]] = {}
    for path in DOC_FILES:
        for command in shell_commands(path):
            words = list(command.words)
            try:
                if words[:2] == ["python", "run.py"]:
                    argv = encoder_sweep_args(probe_sweep_args(main_args(["run.py", *words[2:]])))[1:]
                    multirun = any(a in ("-m", "--multirun") for a in argv)
                    found = jobs_of([a for a in argv if not a.startswith("-")], multirun)
                elif words[:2] == ["elmo-bench", "plan"]:
                    found = jobs_of(COMMANDS["plan"].parse(words[2:]).overrides, multirun=True)
                else:
                    continue
            except Exception as failed:  # noqa: BLE001 - recorded: the same command must fail the same way
                jobs[f"{command.where()} {' '.join(words)} (error {type(failed).__name__})"] = []
                continue
            for job in found:
                jobs[f"doc: {' '.join(words)} -> {' '.join(job)}"] = job
    return jobs


def experiment_jobs() -> dict[str, list[str]]:
    """Every job of every conf/experiment preset (its own sweep expanded)."""
    from elmo_bench.commands.compose import expand_sweep

    jobs: dict[str, list[str]] = {}
    for path in sorted((REPO / "conf" / "experiment").glob("*.yaml")):
        try:
            expanded = expand_sweep([f"experiment={path.stem}"])
        except Exception as failed:  # noqa: BLE001 - recorded
            jobs[f"experiment={path.stem} (error {type(failed).__name__}: {failed})"] = []
            continue
        for job in expanded:
            jobs[f"experiment: {' '.join(job)}"] = job
    return jobs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the JSON file to write")
    parser.add_argument("--only", choices=("tasks", "docs", "experiments"), default=None)
    args = parser.parse_args(argv)
    groups = {"tasks": task_jobs, "docs": documented_jobs, "experiments": experiment_jobs}
    jobs: dict[str, list[str]] = {}
    for name, found in groups.items():
        if args.only in (None, name):
            jobs.update(found())
    dumped = {key: (one_job(job) if job else {"error": "no jobs"}) for key, job in sorted(jobs.items())}
    args.out.write_text(json.dumps(dumped, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    print(f"{len(dumped)} configs -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
