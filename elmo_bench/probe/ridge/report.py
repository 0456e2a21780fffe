"""Probe ridge's part of the report, declared by config.py (``report``): its own section, a table of test accuracy
per layer beside the most-frequent-tag baseline, one row per encoder and experiment (records that differ in what
they measured, e.g. the training sentences, are never averaged as seeds). A copy of this folder under another name
and record task gets its own section the same way: the key and the table's name are the declaring probe's."""
from __future__ import annotations

import re
from typing import Any, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.experiments import apart
from elmo_bench.report.sections import Rendered, Section, SectionInput, StepValue
from elmo_bench.report.table import Table, fmt_stat, stat, stat_json

LAYER = re.compile(r"layer_(\d+)_accuracy")


def _layers(runs: Sequence[Run]) -> list[int]:
    return sorted({int(m.group(1)) for r in runs for k in (r.metrics.get("test") or {}) if (m := LAYER.fullmatch(k))})


def ridge_table(runs: Sequence[Run], probe: str, record_task: str) -> Table:
    """Rows: encoder × experiment; test accuracy (%) of each layer's ridge probe (mean ± std over seeds), the
    most-frequent-tag baseline, n."""
    mine = [r for r in runs if r.task == record_task]
    names = EncoderNames(mine)
    layers = _layers(mine)
    rows: list[list[str]] = []
    records: list[dict[str, Any]] = []
    for key, group in names.split(mine):
        for words, part in apart(group):
            label = names.label(key) + (f" ({words})" if words else "")
            cells = [stat(r.value("test", f"layer_{k}_accuracy") for r in part) for k in layers]
            baseline = stat(r.value("test", "most_frequent_tag_accuracy") for r in part)
            rows.append([label, part[0].data, *map(fmt_stat, cells), fmt_stat(baseline), str(len(part))])
            records.append({"encoder": label, "data": part[0].data, "runs": len(part), "most_frequent_tag":
                            stat_json(baseline), **{f"layer_{k}": stat_json(c) for k, c in zip(layers, cells)}})
    header = ["Encoder", "Data", *[f"layer {k}" for k in layers], "most frequent tag", "n"]
    notes = ["Test accuracy (%) of a closed-form ridge regression of the one-hot tag onto each layer's standardised "
             "features, the ridge chosen on dev; most frequent tag: each word's most frequent training tag; mean ± "
             "std over seeds, n = runs."]
    return Table(f"Probe {probe}: test accuracy per layer", header, rows, notes, key=probe, records=records)


def render(given: SectionInput) -> Rendered:
    return Rendered([ridge_table(given.runs, given.probe, given.record_task)])


def by_step(run: Run) -> list[StepValue]:
    """Each layer's test accuracy, for the "by training step" section (a series point's record)."""
    return [StepValue("POS accuracy, ridge probe (test)", int(m.group(1)), float(v))
            for k, v in sorted((run.metrics.get("test") or {}).items())
            if (m := LAYER.fullmatch(k)) and isinstance(v, (int, float))]


SECTION = Section(order=5, render=render, summary="probe={probe} runs", by_step=by_step)
