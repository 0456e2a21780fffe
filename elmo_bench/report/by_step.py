"""The report's "by training step" section (issue 57 item 3): the probes' numbers on the points of a checkpoint series
against where in training each point was taken (Saphra & Lopez 2019; Liu et al. 2021, "Probing across time").

Cross-probe, so it names no probe: each record that says where its checkpoint was taken (results.json
``encoder.checkpoint``: series, step, tokens seen; elmo_bench.encoders.checkpoints) is handed to the section that
shows it (elmo_bench.report.sections.owner), whose ``by_step`` says which of its numbers go on the axis (POS
accuracy and selectivity, UUAS, lens bits, bits beyond layer 0, ...). Random twins are left out (their weights are
not the point's). Records of one step and one experiment (seeds) are averaged.

Identical weights under different steps (one encoder hash at two positions of a series, as published checkpoint
series were found to hold) are marked "duplicate of step N" in the table and in the figure, and drawn once. The
section is present only when some record has a checkpoint position: a report without one is unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean
from typing import Any, Sequence

from elmo_bench.identity.rules import experiment
from elmo_bench.records.run_record import RunRecord
from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import checkpoint_position, identity, key_of
from elmo_bench.report.experiments import identity_of, varying, words
from elmo_bench.report.probe_common import weights_label
from elmo_bench.report.sections import ReportPlugins, StepValue, owner
from elmo_bench.report.table import MISSING, Table

KEY = "by_step"
#: identity fields that name where a checkpoint lives (its folder's name), not what it holds (its hash)
WHERE = ("model", "file", "path")


def weights_key(record: RunRecord) -> str:
    """Equal for records of identical weights: the encoder's identity, less the checkpoint's folder name where the
    identity holds the content's hash (a Hugging Face revision copied under another step's name)."""
    ident = identity(record)
    return key_of({k: v for k, v in ident.items() if k not in WHERE} if ident.get("hash") else ident)


def setup(record: RunRecord) -> dict[str, Any]:
    """A record's experiment without its encoder and checkpoint: what two records of one series share when they
    were probed alike (the probe, its settings, the data)."""
    return {k: v for k, v in experiment(identity_of(record)).items() if not k.startswith(("encoder.", "checkpoint."))}


@dataclass
class Point:
    """One checkpoint of a series with its probes' numbers: (metric, layer) → the values of its records."""

    series: str
    step: int
    tokens: int | None
    weights: str                       # the encoder's identity key: equal for identical weights
    values: dict[tuple[str, int], list[StepValue]] = field(default_factory=dict)
    duplicate_of: int | None = None    # the earlier step holding identical weights

    def mean(self, metric: str, layer: int) -> tuple[float, float | None, float | None] | None:
        """The mean value and interval of ``metric`` at ``layer`` over the point's records (None: not recorded)."""
        found = self.values.get((metric, layer))
        if not found:
            return None
        lows, highs = [v.low for v in found], [v.high for v in found]
        return (fmean(v.value for v in found), None if None in lows else fmean(lows),  # type: ignore[arg-type]
                None if None in highs else fmean(highs))  # type: ignore[arg-type]


def _experiment_words(runs: Sequence[Run]) -> dict[int, str]:
    """Per run (by id), what sets its experiment apart from the other records of its series and probe (the
    training sentences, a setting), in words; "" where all agree."""
    idents = [setup(run.record) for run in runs]
    keys = varying(idents)
    return {id(run): words(ident, keys) if keys else "" for run, ident in zip(runs, idents)}


def step_values(runs: Sequence[Run], plugins: ReportPlugins) -> list[tuple[Run, list[StepValue]]]:
    """Each trained record of a checkpoint series with the numbers its section puts on the by-step axis, each
    metric titled with what sets its experiment apart where records of one series and probe differ."""
    found: list[tuple[Run, Any, list[StepValue]]] = []
    for run in runs:
        section = owner(run, plugins) if checkpoint_position(run.record) is not None else None
        if section is None or section.by_step is None or weights_label(run.record) != "trained":
            continue
        found.append((run, section, section.by_step(run)))
    out = []
    by_group: dict[tuple[str, str], list[Run]] = {}
    for run, section, _ in found:
        by_group.setdefault((checkpoint_position(run.record)["series"], section.probe), []).append(run)
    apart = {k: v for members in by_group.values() for k, v in _experiment_words(members).items()}
    for run, _, values in found:
        said = apart[id(run)]
        out.append((run, [StepValue(f"{v.metric}, {said}" if said else v.metric, v.layer, v.value, v.low, v.high)
                          for v in values]))
    return out


def points(found: Sequence[tuple[Run, list[StepValue]]]) -> list[Point]:
    """The series' points in order (series, then step), each duplicate marked with the first step of its weights."""
    by_key: dict[tuple[str, int], Point] = {}
    for run, values in found:
        where = checkpoint_position(run.record) or {}
        point = by_key.setdefault((str(where["series"]), int(where["step"])), Point(
            str(where["series"]), int(where["step"]), where.get("tokens_seen"), weights_key(run.record)))
        for value in values:
            point.values.setdefault((value.metric, value.layer), []).append(value)
    ordered = [by_key[k] for k in sorted(by_key)]
    first: dict[tuple[str, str], int] = {}
    for point in ordered:
        seen = first.setdefault((point.series, point.weights), point.step)
        point.duplicate_of = seen if seen != point.step else None
    return ordered


def metrics_of(found: Sequence[Point]) -> list[str]:
    """The metrics in the order their records first give them."""
    return list(dict.fromkeys(metric for p in found for metric, _ in p.values))


def layers_of(found: Sequence[Point]) -> list[int]:
    return sorted({layer for p in found for _, layer in p.values})


def _cell(found: tuple[float, float | None, float | None] | None) -> str:
    if found is None:
        return MISSING
    value, low, high = found
    return f"{value:.3f} [{low:.3f}, {high:.3f}]" if low is not None and high is not None else f"{value:.3f}"


def _note(point: Point) -> str:
    return f"duplicate of step {point.duplicate_of} (identical weights)" if point.duplicate_of is not None else ""


def by_step_table(found: Sequence[Point]) -> Table:
    """Rows: series × metric × step (training order); per layer the value [95% interval where recorded]."""
    layers, several = layers_of(found), len({p.series for p in found}) > 1
    header = [*(["Series"] if several else []), "Metric", "Step", "Tokens seen", *[f"layer {k}" for k in layers],
              "Note"]
    rows, records = [], []
    for series in dict.fromkeys(p.series for p in found):
        mine = [p for p in found if p.series == series]
        for metric in metrics_of(mine):
            for point in (p for p in mine if any(m == metric for m, _ in p.values)):
                means = {k: point.mean(metric, k) for k in layers}
                rows.append([*([series] if several else []), metric, str(point.step),
                             MISSING if point.tokens is None else f"{point.tokens:,}",
                             *[_cell(means[k]) for k in layers], _note(point)])
                records.append({"series": series, "metric": metric, "step": point.step, "tokens_seen": point.tokens,
                                "duplicate_of": point.duplicate_of,
                                **{f"layer_{k}": None if means[k] is None else dict(zip(("value", "lo", "hi"), means[k]))
                                   for k in layers}})
    notes = ["Probes on the points of a checkpoint series (each record's encoder.checkpoint: step and tokens seen, "
             "from checkpoint.json beside the weights, a Hugging Face trainer_state.json, or the checkpoint's name); "
             "[lo, hi]: the probe's 95% interval where it records one; several records of one step: their mean. "
             "Random twins are left out.",
             "A point whose weights are identical to an earlier step's is marked \"duplicate of step N\" and is not "
             "drawn again in the figure."]
    return Table("Probes by training step", header, rows, notes, key=KEY, records=records)
