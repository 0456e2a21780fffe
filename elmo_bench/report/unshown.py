"""The runs a report reads but no table can show, each kind with its reason (issue 45: a run counted in "N runs
used" must be in a table or counted as skipped, never silently nowhere). The summary names them; a report whose runs
are all shown is unchanged."""
from __future__ import annotations

from typing import Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.edge_report import PREFIX
from elmo_bench.report.sections import NO_PLUGINS, ReportPlugins

#: the mixes the task tables compare: Table 1 / Figure 2 the learned mix, Table 2 the top layer
TABLE_MODES = ("learned", "top")

#: the ablation axes of the task tables: Table 2 varies lambda, Table 3 the placement, the scale ablation the rest
AXES = (("lambda",), ("placement",), ("layer_norm", "gamma_init", "dropout"))


def _scaled(run: Run) -> bool:
    return bool((run.record.config.get("trainer") or {}).get("scale_epochs"))


def _mix_reason(run: Run) -> str | None:
    """A +ELMo task run whose mix no task table compares: another mode, the top layer with more than lambda
    changed, or a learned mix changed along two ablation axes at once (each table varies one)."""
    if run.mode not in TABLE_MODES:
        return (f"{run.task} run(s) with mix={run.mode} (the task tables compare the learned mix and the top layer; "
                f"single layers of the encoder are compared by the probes)")
    axes = [keys for keys in AXES if run.overrides(*keys)]
    if (run.mode == "top" and any(keys != ("lambda",) for keys in axes)) or len(axes) > 1:
        changed = ", ".join(key for keys in axes for key in keys if run.overrides(key))
        return (f"{run.task} run(s) with mix={run.mode} and {changed} changed together (each task table varies one "
                f"setting from the task's own)")
    return None


def _reason(run: Run, fractions: dict[tuple[str, str], set[float]], plugins: ReportPlugins) -> str | None:
    """Why no table shows this run, or None when one does (``fractions``: the training fractions of each task's
    sample-efficiency runs; a run whose task a probe's section claims: that section's reason, if any)."""
    if run.task.startswith(PREFIX):
        return None if run.has_elmo else "edge-probing run(s) without encoder layers (nothing to probe)"
    section = next((s for s in plugins.sections if run.task in s.claims), None)
    if section is not None:
        return section.unshown(run) if section.unshown is not None else None
    if _scaled(run) and not run.adapted:               # Figure 1's runs: no other table reads them
        if not run.is_default:
            return f"{run.task} sample-efficiency run(s) with another mix than the task's (Figure 1 shows the task's)"
        if len(fractions.get((run.task, run.data), ())) < 2:
            return f"{run.task} sample-efficiency run(s) at a single training fraction (Figure 1 needs two)"
        return None
    return _mix_reason(run) if run.has_elmo and not run.adapted else None


def split_unclaimed(runs: Sequence[Run], plugins: ReportPlugins = NO_PLUGINS) -> tuple[list[Run], list[Run]]:
    """(the runs a table may show, the probe records no section shows): a probe run's record goes to its own
    section or nowhere, never into a task table (a probe's record task is no task); so does the record of a
    probe's record task that no section claims (``plugins``: the sections the probes declare)."""
    claimed = plugins.claimed

    def apart(run: Run) -> bool:
        return (run.is_probe or run.probe_task) and run.task not in claimed

    return [r for r in runs if not apart(r)], [r for r in runs if apart(r)]


def unshown(runs: Sequence[Run], unclaimed: Sequence[Run] = (), plugins: ReportPlugins = NO_PLUGINS
            ) -> list[tuple[str, int]]:
    """(reason, runs) for every kind of run read that no table shows, in the order first found (``unclaimed``:
    probe records no section shows, :func:`split_unclaimed`)."""
    fractions: dict[tuple[str, str], set[float]] = {}
    for run in runs:                                   # as run_tables.sample_efficiency_curves groups them
        if run.is_default and not run.adapted and run.task not in plugins.claimed:
            fractions.setdefault((run.task, run.data), set()).add(run.fraction)
    counts: dict[str, int] = {}
    for run in runs:
        reason = _reason(run, fractions, plugins)
        if reason is not None:
            counts[reason] = counts.get(reason, 0) + 1
    for run in unclaimed:
        name = (run.record.extra.get("probe") or {}).get("name") or run.task
        reason = f"probe={name} record(s) (no section of the report shows this probe; its results.json holds its numbers)"
        counts[reason] = counts.get(reason, 0) + 1
    return list(counts.items())


def summary(runs: Sequence[Run], unclaimed: Sequence[Run] = (), plugins: ReportPlugins = NO_PLUGINS) -> str:
    """The summary's sentence about them ("" when every run read is shown)."""
    found = unshown(runs, unclaimed, plugins)
    if not found:
        return ""
    listed = "; ".join(f"{count} {reason}" for reason, count in found)
    return f" Read but in no table ({sum(count for _, count in found)}, counted as skipped): {listed}."
