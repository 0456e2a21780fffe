"""``python run.py -m ...`` with a sweep on the command line: every swept value through run.py's door before any job
starts. Hydra composes and launches the jobs one after another, so ``seed=1,abc`` trained the seed-1 job to the end
before the ``seed=abc`` job said what was wrong; now it is the same one line ``elmo-bench plan`` gives, at once.
The jobs checked are a subset in which every swept ``key=value`` occurs (one config each, not the whole product).
"""
from __future__ import annotations

from typing import Sequence

from elmo_bench.commands.checkpoint_series import check_series
from elmo_bench.commands.compose import compose_job, expand_sweep
from elmo_bench.commands.main_args import LEAVE_ALONE, _override_positions
from elmo_bench.commands.probe_sweep_args import sweeps_probes

#: flags that only describe the run (nothing is launched): no check
DESCRIBE = ("-c", "--cfg", "-i", "--info", "-h", "--help", "--resolve")
MULTIRUN = ("-m", "--multirun")


def covering(jobs: Sequence[Sequence[str]]) -> list[list[str]]:
    """The jobs, in order, that each bring a ``key=value`` not seen before."""
    seen: set[str] = set()
    chosen = []
    for job in jobs:
        if not set(job) <= seen:
            chosen.append(list(job))
            seen |= set(job)
    return chosen


def check_sweep(args: Sequence[str]) -> int:
    """``args`` (run.py's, program name first, as main_args made them): when they sweep (a comma list, range or
    glob, with ``-m`` or an experiment in MULTIRUN mode), compose every swept value through the door
    (commands.plan.compose_job); ConfigError (one line) for the first bad one; then its checkpoint series (commands.checkpoint_series: identical
    weights warned, mixed architectures refused). Returns the jobs checked."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    rest = list(args[1:])
    flags = {arg.split("=", 1)[0] for arg in rest if arg.startswith("-")}
    if flags & set(LEAVE_ALONE + DESCRIBE):
        return 0
    overrides = [rest[i] for i in _override_positions(rest)]
    parsed = OverridesParser.create().parse_overrides(overrides)
    if not any(o.is_sweep_override() for o in parsed) and not sweeps_probes(overrides):
        return 0  # (experiment=probe_suite sweeps probe in its own sweeper: its jobs are checked too)
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    first = BasicSweeper.split_arguments(parsed, None)[0][0]   # probe=a,b probe.<key>=v composes with a probe chosen
    mode = compose_job(first, check=False).hydra.mode
    if not (flags & set(MULTIRUN) or getattr(mode, "name", mode) == "MULTIRUN"):
        return 0  # Hydra refuses a sweep value outside a sweep itself
    jobs = covering(expand_sweep(overrides))
    check_series([compose_job(job, multirun=True) for job in jobs])  # every checkpoint is in a covering job
    return len(jobs)
