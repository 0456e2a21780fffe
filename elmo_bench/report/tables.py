"""The paper's tables as plain rows of strings, from grouped runs. Missing cells are "—", never zeros.

Which runs feed which table (all at the full training set unless said otherwise):
- Table 1: the task's paper configuration (GloVe baseline; +ELMo with a learned mix and no mix overrides), test.
- Table 2: dev; baseline, +ELMo top layer only, +ELMo learned mix with lambda 1 / 0.001 (placement as the task's).
- Table 3: dev; +ELMo learned mix with the task's lambda, by placement input / both / output.
- Table 5: the WSD probe's results (task "wsd"), F1 per layer per evaluation set.
- Table 6: the POS probe (task "pos"), test accuracy per single layer and for the learned mix.
"""
from __future__ import annotations

import dataclasses

import math
import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from elmo_bench.report import paper
from elmo_bench.report.collect import MIX_OVERRIDES, Run

MISSING = "—"
PROBE_TASKS = ("pos", "wsd")
WSD_SET_ORDER = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "all")


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


@dataclass
class Stat:
    mean: float
    std: float | None
    n: int


def stat(values: Iterable[float | None]) -> Stat | None:
    """Mean and sample standard deviation (None for one value) of the values that exist."""
    found = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not found:
        return None
    return Stat(statistics.fmean(found), statistics.stdev(found) if len(found) > 1 else None, len(found))


def fmt(value: float | None, digits: int = 2) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def fmt_stat(s: Stat | None) -> str:
    if s is None:
        return MISSING
    return fmt(s.mean) if s.std is None else f"{s.mean:.2f} ± {s.std:.2f}"


def relative_increase(baseline: float, elmo: float) -> float:
    """The paper's relative error reduction in percent: (elmo - baseline) / (100 - baseline) x 100."""
    if baseline >= 100.0:
        raise ValueError(f"relative increase: baseline {baseline} leaves no error to reduce")
    return 100.0 * (elmo - baseline) / (100.0 - baseline)


def _increase(base: float | None, elmo: float | None) -> tuple[str, str]:
    if base is None or elmo is None:
        return MISSING, MISSING
    rel = fmt(relative_increase(base, elmo), 1) + "%" if base < 100.0 else MISSING
    return f"{elmo - base:+.2f}", rel


def _mean(s: Stat | None) -> float | None:
    return None if s is None else s.mean


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


def full_data(runs: Iterable[Run]) -> list[Run]:
    return [r for r in runs if r.fraction == 1.0 and r.task not in PROBE_TASKS]


PValue = Callable[[list[Run], list[Run]], tuple[float | None, str]]


def _scaled(run: Run) -> bool:
    """A sample-efficiency run (epochs scaled to its fraction): it belongs to Figure 1, not Table 1."""
    return bool(((run.raw.get("config") or {}).get("trainer") or {}).get("scale_epochs"))


def _data_label(run: Run) -> str:
    return run.data if run.fraction == 1.0 else f"{run.data} ({run.fraction:g} of train)"


def table1(runs: Sequence[Run], p_value: PValue | None = None) -> Table:
    # every baseline/+ELMo pair of a task's paper configuration; a budget run on a fraction of the training data is
    # its own row, labelled with the fraction, so a smaller budget is never averaged with the full one
    chosen = [dataclasses.replace(r, data=_data_label(r)) for r in runs
              if r.is_default and r.task not in PROBE_TASKS and not _scaled(r)]
    groups = _group(chosen, lambda r: (r.task, r.data, r.has_elmo))
    rows, notes = [], []
    for task, data in _task_rows(chosen, paper.TABLE1_ORDER):
        base_runs, elmo_runs = groups.get((task, data, False), []), groups.get((task, data, True), [])
        base, elmo = stat(r.value("test") for r in base_runs), stat(r.value("test") for r in elmo_runs)
        metric = (base_runs or elmo_runs)[0].main_metric if (base_runs or elmo_runs) else MISSING
        abs_inc, rel_inc = _increase(_mean(base), _mean(elmo))
        ref = paper.TABLE1.get(task)
        paper_abs, paper_rel = _increase(ref["baseline"], ref["elmo"]) if ref else (MISSING, MISSING)
        p_text = MISSING
        if p_value is not None and base_runs and elmo_runs:
            p, why = p_value(elmo_runs, base_runs)
            if p is not None:
                p_text = "< 0.001" if p < 0.001 else f"{p:.3f}"
            elif why != "no predictions":
                notes.append(f"{task} ({data}): no p-value: {why}.")
        rows.append([task, data, metric, fmt_stat(base), fmt_stat(elmo), abs_inc, rel_inc,
                     f"{base.n if base else 0}/{elmo.n if elmo else 0}",
                     fmt(ref["baseline"]) if ref else MISSING, fmt(ref["elmo"]) if ref else MISSING,
                     f"{paper_abs} / {paper_rel}" if ref else MISSING, p_text])
    notes[:0] = [
        "Test set, mean ± sample std over seeds; n = seeds (baseline/+ELMo). Increase: absolute, and relative = "
        "abs / (100 − baseline), the paper's relative error reduction.",
        "p: one-sided paired bootstrap over test examples (+ELMo better), from predictions_test.json of all seeds; "
        "accuracy and SQuAD scores are resampled per example, corpus-level F1 (NER, SRL, coref) is recomputed on "
        "each resample with the task's own metric.",
        "Paper columns: the paper's baseline and +ELMo test numbers (its Table 1).",
    ]
    header = ["Task", "Data", "Metric", "Baseline", "+ELMo", "Increase (abs)", "Increase (rel)", "n",
              "Paper baseline", "Paper +ELMo", "Paper increase (abs / rel)", "p (bootstrap)"]
    return Table("Table 1: baseline vs +ELMo (test)", header, rows, notes)


def _no_override(r: Run, *keys: str) -> bool:
    return not r.overrides(*keys)


TABLE2_COLUMNS: dict[str, Callable[[Run], bool]] = {
    "baseline": lambda r: not r.has_elmo,
    "last_only": lambda r: r.has_elmo and r.mode == "top" and _no_override(r, "placement", "layer_norm", "dropout"),
    "lambda_1": lambda r: r.has_elmo and r.mode == "learned" and r.l2_coef == 1.0
    and _no_override(r, "placement", "layer_norm", "dropout"),
    "lambda_0.001": lambda r: r.has_elmo and r.mode == "learned" and r.l2_coef == 0.001
    and _no_override(r, "placement", "layer_norm", "dropout"),
}


def _column_table(title: str, runs: Sequence[Run], columns: dict[str, Callable[[Run], bool]],
                  labels: Sequence[str], reference: dict[str, dict[str, float]], order: Sequence[str],
                  notes: list[str]) -> Table:
    data_runs = full_data(runs)
    used = [r for r in data_runs if any(test(r) for test in columns.values())]
    # a task appears when the paper has it or it has a non-baseline cell of this table
    shown = [r for r in used if any(test(r) for name, test in columns.items() if name != "baseline")]
    pairs = [(t, d) for t, d in _task_rows(shown, order)]
    rows = []
    for task, data in pairs:
        cells = []
        for test in columns.values():
            cells.append(fmt_stat(stat(r.value("dev") for r in used if r.task == task and r.data == data and test(r))))
        ref = reference.get(task)
        cells.append(" / ".join(fmt(ref.get(name), 1) for name in columns) if ref else MISSING)
        rows.append([task, data, *cells])
    return Table(title, ["Task", "Data", *labels, "Paper (" + " / ".join(labels) + ")"], rows, notes)


def table2(runs: Sequence[Run]) -> Table:
    return _column_table(
        "Table 2: all biLM layers vs the last one only (dev)", runs, TABLE2_COLUMNS,
        ["Baseline", "Last only", "All, λ=1", "All, λ=0.001"], paper.TABLE2, ("squad", "snli", "srl"),
        ["Dev set, mean ± std over seeds. Placement, layer norm and dropout are the task's paper settings."])


TABLE3_COLUMNS: dict[str, Callable[[Run], bool]] = {
    place: (lambda r, place=place: r.has_elmo and r.mode == "learned" and r.placement == place
            and _no_override(r, "lambda", "layer_norm", "dropout"))
    for place in ("input", "both", "output")
}


def table3(runs: Sequence[Run]) -> Table:
    return _column_table(
        "Table 3: where ELMo enters the task model (dev)", runs, TABLE3_COLUMNS,
        ["Input only", "Input & output", "Output only"], paper.TABLE3, ("squad", "snli", "srl"),
        ["Dev set, mean ± std over seeds; learned mix with the task's paper lambda, layer norm and dropout."])


def _layer_columns(found: Iterable[str]) -> list[str]:
    keys = set(found)
    layers = sorted({k for k in keys if re.fullmatch(r"layer_\d+_f1", k)}, key=lambda k: int(k.split("_")[1]))
    others = sorted({k for k in keys if k.endswith("_f1")} - set(layers))
    return layers + others


def _set_order(name: str) -> tuple[int, str]:
    low = name.lower()
    return (WSD_SET_ORDER.index(low) if low in WSD_SET_ORDER else len(WSD_SET_ORDER), low)


def table5(runs: Sequence[Run]) -> Table:
    wsd = [r for r in runs if r.task == "wsd"]
    sets = sorted({s for r in wsd for s, m in r.metrics.items() if isinstance(m, dict)}, key=_set_order)
    columns = _layer_columns(k for r in wsd for m in r.metrics.values() if isinstance(m, dict) for k in m)
    if not columns:
        columns = [f"layer_{k}_f1" for k in (0, 1, 2)] + ["average_f1"]
    rows = []
    for name in sets:
        values = [stat((r.metrics.get(name) or {}).get(c) for r in wsd) for c in columns]
        n = max((v.n for v in values if v), default=0)
        rows.append([name, *[fmt(_mean(v)) for v in values], str(n)])
    paper_row = ["paper biLM (ALL)"]
    for c in columns:
        match = re.fullmatch(r"layer_(\d+)_f1", c)
        paper_row.append(fmt(paper.TABLE5_BILM.get(int(match.group(1))), 1) if match else MISSING)
    rows.append([*paper_row, MISSING])
    labels = [c[: -len("_f1")].replace("_", " ") for c in columns]
    notes = ["F1 (Raganato et al. 2017 scorer semantics), 1-nearest-neighbour sense per layer; layer 0 is the "
             "context-free token layer, the paper's first and second biLSTM layers are our layers 1 and 2.",
             f"Paper: WordNet first-sense baseline {paper.TABLE5_WORDNET_FIRST_SENSE:.1f} F1."]
    return Table("Table 5: WSD probe, F1 per biLM layer", ["Set", *labels, "n"], rows, notes)


def table6(runs: Sequence[Run]) -> Table:
    pos = [r for r in runs if r.task == "pos" and r.fraction == 1.0 and r.has_elmo]
    layers = sorted({r.layer_index for r in pos if r.mode == "layer" and r.layer_index is not None})
    layers = layers or [0, 1, 2]
    rows = []
    for data in sorted({r.data for r in pos}):
        runs_d = [r for r in pos if r.data == data]
        cells = [stat(r.value("test") for r in runs_d if r.mode == "layer" and r.layer_index == k) for k in layers]
        learned = stat(r.value("test") for r in runs_d if r.mode == "learned" and not r.overrides(*MIX_OVERRIDES))
        rows.append([data, *[fmt_stat(c) for c in cells], fmt_stat(learned)])
    rows.append(["paper biLM (PTB WSJ)", *[fmt(paper.TABLE6_BILM.get(k), 1) for k in layers], MISSING])
    notes = ["Test accuracy of a linear classifier on one frozen layer (mean ± std over seeds); layer 0 is the "
             "token layer, the paper's first and second biLSTM layers are our layers 1 and 2."]
    if any("conll2000" in r.data for r in pos):
        notes.append("CoNLL-2000's POS column was tagged automatically (Brill tagger), not by hand.")
    return Table("Table 6: POS probe, accuracy per biLM layer", ["Data", *[f"layer {k}" for k in layers],
                                                                 "learned mix"], rows, notes)


def sample_efficiency_points(runs: Sequence[Run]) -> dict[tuple[str, str], dict[str, dict[float, Stat]]]:
    """{(task, data): {embedder: {fraction: Stat}}} of the tasks that have at least two training fractions.

    The metric is the test main metric (dev where a run has no test split).
    """
    chosen = [r for r in runs if r.is_default and r.task not in PROBE_TASKS]
    out: dict[tuple[str, str], dict[str, dict[float, Stat]]] = {}
    for (task, data), group in sorted(_group(chosen, lambda r: (r.task, r.data)).items()):
        if len({r.fraction for r in group}) < 2:
            continue
        curves: dict[str, dict[float, Stat]] = {}
        for (embedder, fraction), cell in sorted(_group(group, lambda r: (r.embedder, r.fraction)).items()):
            s = stat(r.value("test") if r.value("test") is not None else r.value("dev") for r in cell)
            if s is not None:
                curves.setdefault(embedder, {})[fraction] = s
        out[(task, data)] = curves
    return out


def figure1_table(runs: Sequence[Run]) -> Table:
    rows = []
    for (task, data), curves in sample_efficiency_points(runs).items():
        fractions = sorted({f for c in curves.values() for f in c})
        for embedder, points in curves.items():
            for f in fractions:
                s = points.get(f)
                rows.append([task, data, embedder, f"{100 * f:g}%", fmt_stat(s), str(s.n) if s else "0"])
    return Table("Figure 1 data: sample efficiency", ["Task", "Data", "Embedder", "Training data", "Metric", "n"],
                 rows, ["Test main metric (dev where a run has no test split), mean ± std over seeds; nested "
                        "subsets per seed."])


def learned_mixes(runs: Sequence[Run]) -> dict[tuple[str, str], dict[str, tuple[list[float], int]]]:
    """{(task, data): {"input"|"output": (mean softmax weights over seeds, n)}} of default +ELMo full-data runs."""
    chosen = [r for r in full_data(runs) if r.is_default and r.has_elmo]
    out: dict[tuple[str, str], dict[str, tuple[list[float], int]]] = {}
    for (task, data), group in sorted(_group(chosen, lambda r: (r.task, r.data)).items()):
        for where in ("input", "output"):
            weights = [m["weights"] for r in group if (m := (r.mixes or {}).get(where)) and m.get("weights")]
            sizes = {len(w) for w in weights}
            if len(sizes) == 1:
                mean = [statistics.fmean(column) for column in zip(*weights)]
                out.setdefault((task, data), {})[where] = (mean, len(weights))
    return out


def figure2_table(runs: Sequence[Run]) -> Table:
    mixes = learned_mixes(runs)
    width = max((len(w) for m in mixes.values() for w, _ in m.values()), default=3)
    rows = []
    for (task, data), by_place in mixes.items():
        for where, (weights, n) in by_place.items():
            rows.append([task, data, where, *[fmt(weights[k], 3) if k < len(weights) else MISSING
                                              for k in range(width)], str(n)])
    return Table("Figure 2 data: learned softmax layer weights", ["Task", "Data", "Mix",
                                                                  *[f"layer {k}" for k in range(width)], "n"],
                 rows, ["Softmax-normalised layer weights s_j of the learned mixes, mean over seeds."])
