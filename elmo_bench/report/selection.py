"""Which runs a task table reads: grouping, the (task, data) rows in the paper's order, the trained task runs the
tables compare (no probe records, no records a probe's section claims, no epoch-scaled sample-efficiency runs),
Table 1's runs (a fraction of the training data and ``bilm=adapted`` as rows of their own), and whose layers a
probe table shows."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.table import MISSING

ADAPTED_LABEL = "+ELMo with bilm=adapted"


def _group(runs: Iterable[Run], key: Callable[[Run], Any]) -> dict[Any, list[Run]]:
    groups: dict[Any, list[Run]] = {}
    for run in runs:
        groups.setdefault(key(run), []).append(run)
    return groups


def _task_rows(runs: Sequence[Run], order: Sequence[str]) -> list[tuple[str, str]]:
    """(task, data) pairs: every task in ``order`` (data "—" when it has no runs), then any other task found."""
    found = sorted({(r.task, r.data) for r in runs})
    rows: list[tuple[str, str]] = []
    for task in [*order, *sorted({t for t, _ in found} - set(order))]:
        datas = [d for t, d in found if t == task]
        rows.extend((task, d) for d in datas) if datas else rows.append((task, MISSING))
    return rows


PValue = Callable[[list[Run], list[Run]], tuple[float | None, str]]


def _scaled(run: Run) -> bool:
    """A sample-efficiency run (epochs scaled to its fraction): it belongs to Figure 1, not Table 1."""
    return bool((run.record.config.get("trainer") or {}).get("scale_epochs"))


def _data_label(run: Run) -> str:
    return run.data if run.fraction == 1.0 else f"{run.data} ({run.fraction:g} of train)"


def _budget_runs(runs: Iterable[Run]) -> list[Run]:
    """The trained task runs the tables compare (no probes, no epoch-scaled sample-efficiency runs), each with its
    data labelled by its training fraction, so a budget run on part of the data is its own row."""
    return [dataclasses.replace(r, data=_data_label(r)) for r in runs
            if not r.shown_apart and not r.is_probe and not _scaled(r)]


def _table1_runs(runs: Sequence[Run]) -> list[Run]:
    """Every baseline/+ELMo run of a task's paper configuration; a budget run on a fraction of the training data is
    its own row, labelled with the fraction, so a smaller budget is never averaged with the full one; +ELMo with
    bilm=adapted is its own row, against the same baseline runs."""
    labelled = [r for r in _budget_runs(runs) if r.is_default]
    adapted_rows = {(r.task, r.data) for r in labelled if r.adapted}
    chosen = [r for r in labelled if not r.adapted]
    chosen += [dataclasses.replace(r, data=f"{r.data}, {ADAPTED_LABEL}") for r in labelled
               if r.adapted or (not r.has_elmo and (r.task, r.data) in adapted_rows)]
    return chosen


def layer_title(names: EncoderNames, runs: Iterable[Run]) -> str:
    """Whose layers a probe table shows, for its title: "biLM layer" when every run is a biLM's (the paper's
    wording), "<encoder> layer" for one other encoder, "encoder layer" for several (issue 45: a MiniLM row under
    "per biLM layer")."""
    keys = list(dict.fromkeys(r.encoder_key for r in runs if r.encoder_key is not None))
    if all(names.is_bilm(k) for k in keys):
        return "biLM layer"
    return f"{names.label(keys[0])} layer" if len(keys) == 1 else "encoder layer"
