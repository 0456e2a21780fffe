"""``elmo-bench config [OVERRIDES...] [--format yaml|json]``: the resolved RunConfig of each job ``python run.py
OVERRIDES`` would run, every effective value (the ``mix`` group over the task's ``elmo:`` block, the ``trainer``
group over the task's ``trainer:`` block, presets composed), checked at the same door (engine.config_door), so a bad
override is the same one line. Nothing is read, trained or written.

As ``run.py``: without ``task=`` or ``experiment=`` the quickstart (elmo_bench.commands.main_args); a sweep (comma
lists, an experiment's own ``hydra.sweeper.params``) prints one document per job, in launch order (YAML documents
separated by ``---``; JSON: one object a line). Each document holds the job's ``overrides`` and the RunConfig's parts:
``task`` (``name``, ``head``, ``elmo``: the settings the model gets, ``trainer``: the merged trainer settings and the
epoch scaling), ``mix`` (the group as composed), ``data``, ``embedder``, ``encoder`` (with ``bilm``), ``runtime``,
``paths``, ``logger``, ``choices``.
"""
from __future__ import annotations

import json
import sys
from typing import Any, Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.commands.compose import expand_sweep, job_run
from elmo_bench.commands.main_args import QUICKSTART, names_a_job
from elmo_bench.encoders.kinds import kind_of
from elmo_bench.engine.probe_config import ProbeRunConfig, describe_probe
from elmo_bench.engine.run_config import RunConfig, describe
from elmo_bench.records.elmo_settings import canonical_mix


def build_parser() -> ArgumentParser:
    """``elmo-bench config``'s arguments: Hydra overrides as run.py takes them, and the output format."""
    parser = ArgumentParser(prog="elmo-bench config",
                            description="Every effective value of the run(s) that run.py would launch with these "
                                        "overrides: the resolved, checked RunConfig.")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, as run.py takes them")
    parser.add_argument("--format", choices=["yaml", "json"], default="yaml")
    return parser


def resolved_jobs(overrides: Sequence[str]) -> list[dict[str, Any]]:
    """Each job's overrides and its RunConfig's values (engine.run_config.describe), through the door."""
    args = list(overrides) if names_a_job(list(overrides)) else [*overrides, QUICKSTART]
    runs = [(job, job_run(job)) for job in expand_sweep(args)]
    for _, run in runs:
        check_layer_cheaply(run)
    return [{"overrides": job, **described(run)} for job, run in runs]


def described(run: Any) -> dict[str, Any]:
    """A task run's RunConfig or a probe run's ProbeRunConfig, every effective value."""
    return describe_probe(run) if isinstance(run, ProbeRunConfig) else describe(run)


def check_layer_cheaply(run: RunConfig | ProbeRunConfig) -> None:
    """``mix.layer`` against the encoder's layers where that is cheap to know (the biLM's options.json: nothing
    loaded), so the line run.py would give comes here too; another encoder is left to run.py and ``plan``. A probe
    run has no mix."""
    if isinstance(run, ProbeRunConfig):
        return
    if not run.embedder.elmo:
        return
    spec = run.encoder.plain()
    kind = kind_of(spec)
    ids = kind.layer_ids(spec, run.encoder.bilm, True) if kind.layer_ids is not None else None
    if ids is not None:
        canonical_mix(run.mix.mix, len(ids))


def render(jobs: Sequence[dict[str, Any]], fmt: str) -> str:
    """YAML documents (``---`` between jobs) or JSON lines."""
    if fmt == "json":
        return "".join(json.dumps(job, default=str) + "\n" for job in jobs)
    import yaml  # lazy: only the YAML output needs it

    return "---\n".join(yaml.safe_dump(json.loads(json.dumps(job, default=str)), sort_keys=False) for job in jobs)


def config_main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    sys.stdout.write(render(resolved_jobs(args.overrides), args.format))
    return 0
