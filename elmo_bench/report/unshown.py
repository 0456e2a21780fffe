"""The runs a report reads but no table can show, each kind with its reason (issue 45: a run counted in "N runs
used" must be in a table or counted as skipped, never silently nowhere). The summary names them; a report whose runs
are all shown is unchanged."""
from __future__ import annotations

from typing import Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.edge_report import PREFIX

#: the mixes the task tables compare: Table 1 / Figure 2 the learned mix, Table 2 the top layer
TABLE_MODES = ("learned", "top")
#: tasks whose runs their own tables read whatever their mix (probes; edge runs have the edge table)
OWN_TABLES = ("pos", "wsd", "pos_probe", "structural_probe", "mdl_probe")


def _reason(run: Run) -> str | None:
    """Why no table shows this run, or None when one does."""
    if run.task.startswith(PREFIX):
        return None if run.has_elmo else "edge-probing run(s) without encoder layers (nothing to probe)"
    if run.task == "pos" and not run.has_elmo:
        return "POS run(s) without encoder layers (Table 6 compares layers)"
    if run.task not in OWN_TABLES and run.has_elmo and run.mode not in TABLE_MODES:
        return (f"{run.task} run(s) with mix={run.mode} (the task tables compare the learned mix and the top layer; "
                f"single layers of the encoder are compared by the probes)")
    return None


def unshown(runs: Sequence[Run]) -> list[tuple[str, int]]:
    """(reason, runs) for every kind of run read that no table shows, in the order first found."""
    counts: dict[str, int] = {}
    for run in runs:
        reason = _reason(run)
        if reason is not None:
            counts[reason] = counts.get(reason, 0) + 1
    return list(counts.items())


def summary(runs: Sequence[Run]) -> str:
    """The summary's sentence about them ("" when every run read is shown)."""
    found = unshown(runs)
    if not found:
        return ""
    listed = "; ".join(f"{count} {reason}" for reason, count in found)
    return f" Read but in no table ({sum(count for _, count in found)}, counted as skipped): {listed}."
