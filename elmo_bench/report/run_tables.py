"""The tables of the task runs beyond the paper's: the sample-efficiency points (Figure 1's data), the learned mixes
(Figure 2's), the dev curves, the budget each run stopped at, the scale ablation, the runs skipped for a non-finite
metric and the records' train/test overlap."""
from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Sequence

from elmo_bench.records.stopping import StoppingRule
from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames, kept_layers
from elmo_bench.report.selection import _budget_runs, _group
from elmo_bench.report.table import MISSING, Stat, Table, _mean, fmt, fmt_stat, stat, stat_json

Curve = tuple[str, str]  # (embedder, encoder label: "" unless the runs come from several encoders)


def sample_efficiency_curves(runs: Sequence[Run], names: EncoderNames | None = None
                             ) -> dict[tuple[str, str], dict[Curve, dict[float, Stat]]]:
    """{(task, data): {(embedder, encoder label): {fraction: Stat}}} of the tasks that have at least two training
    fractions; the encoder label is "" for the baseline and whenever the runs come from one biLM.

    The metric is the test main metric (dev where a run has no test split).
    """
    chosen = [r for r in runs if r.is_default and not r.shown_apart and not r.adapted]
    names = names or EncoderNames(chosen)
    several = names.several(chosen)

    def curve(run: Run) -> Curve:
        return run.embedder, names.labels.get(run.encoder_key, "") if several else ""

    out: dict[tuple[str, str], dict[Curve, dict[float, Stat]]] = {}
    for (task, data), group in sorted(_group(chosen, lambda r: (r.task, r.data)).items()):
        if len({r.fraction for r in group}) < 2:
            continue
        curves: dict[Curve, dict[float, Stat]] = {}
        for (line, fraction), cell in sorted(_group(group, lambda r: (curve(r), r.fraction)).items()):
            s = stat(r.value("test") if r.value("test") is not None else r.value("dev") for r in cell)
            if s is not None:
                curves.setdefault(line, {})[fraction] = s
        out[(task, data)] = curves
    return out


def sample_efficiency_points(runs: Sequence[Run]) -> dict[tuple[str, str], dict[str, dict[float, Stat]]]:
    """{(task, data): {embedder: {fraction: Stat}}}: the curves of one encoder's runs (Directions reads the
    reference encoder's runs only, see EncoderNames)."""
    return {cell: {embedder: points for (embedder, _), points in curves.items()}
            for cell, curves in sample_efficiency_curves(runs).items()}


def figure1_table(runs: Sequence[Run], names: EncoderNames | None = None) -> Table:
    """The sample-efficiency points; with several encoders an Encoder column after Embedder."""
    rows = []
    points = sample_efficiency_curves(runs, names)
    several = any(label for curves in points.values() for _, label in curves)
    for (task, data), curves in points.items():
        fractions = sorted({f for c in curves.values() for f in c})
        for (embedder, label), by_fraction in curves.items():
            for f in fractions:
                s = by_fraction.get(f)
                rows.append([task, data, embedder, *([label or MISSING] if several else []), f"{100 * f:g}%",
                             fmt_stat(s), str(s.n) if s else "0"])
    header = ["Task", "Data", "Embedder", *(["Encoder"] if several else []), "Training data", "Metric", "n"]
    return Table("Figure 1 data: sample efficiency", header,
                 rows, ["Test main metric (dev where a run has no test split), mean ± std over seeds; nested "
                        "subsets per seed."], key="figure1")


def learned_mixes(runs: Sequence[Run]) -> dict[tuple[str, str], dict[str, tuple[list[float], int]]]:
    """{(task, data): {"input"|"output": (mean softmax weights over seeds, n)}} of Table 1's +ELMo runs (the base
    biLM; a budget fraction is its own row, as in Table 1)."""
    chosen = [r for r in _budget_runs(runs) if r.is_default and r.has_elmo and not r.adapted]
    out: dict[tuple[str, str], dict[str, tuple[list[float], int]]] = {}
    for (task, data), group in sorted(_group(chosen, lambda r: (r.task, r.data)).items()):
        for where in ("input", "output"):
            weights = [m["weights"] for r in group if (m := (r.mixes or {}).get(where)) and m.get("weights")]
            sizes = {len(w) for w in weights}
            if len(sizes) == 1:
                mean = [statistics.fmean(column) for column in zip(*weights)]
                out.setdefault((task, data), {})[where] = (mean, len(weights))
    return out


def mix_layer_names(runs: Sequence[Run], width: int) -> list[str]:
    """The names of a mix's ``width`` inputs: the model's layer numbers where the runs' encoder kept a subset
    (``encoder.layers``: layer 0, 4, 8, 11), else their positions 0..width−1."""
    kept = kept_layers(r.record for r in runs if r.has_elmo)
    return [str(k) for k in kept] if kept is not None and len(kept) == width else [str(k) for k in range(width)]


def figure2_table(runs: Sequence[Run]) -> Table:
    mixes = learned_mixes(runs)
    width = max((len(w) for m in mixes.values() for w, _ in m.values()), default=3)
    rows = []
    for (task, data), by_place in mixes.items():
        for where, (weights, n) in by_place.items():
            rows.append([task, data, where, *[fmt(weights[k], 3) if k < len(weights) else MISSING
                                              for k in range(width)], str(n)])
    return Table("Figure 2 data: learned softmax layer weights", ["Task", "Data", "Mix",
                                                                  *[f"layer {k}" for k in mix_layer_names(runs, width)],
                                                                  "n"],
                 rows, ["Softmax-normalised layer weights s_j of the learned mixes, mean over seeds."], key="figure2")


def dev_history(run: Run) -> list[tuple[int, float]]:
    """(epoch, dev main metric) per epoch from results.json ``history`` (or ``epochs.history``); [] if absent.

    results.json's ``history`` entries carry ``dev_metric`` (the main metric); ``epochs.history`` entries a ``dev``
    dict of every dev metric (older files: ``dev`` as the value itself)."""
    history = run.record.history
    if history is None:
        history = run.record.epochs.get("history") or []
    points = []
    for entry in history if isinstance(history, list) else []:
        if not isinstance(entry, dict) or "epoch" not in entry:
            continue
        dev = entry.get("dev_metric", entry.get("dev"))
        value = dev.get(run.main_metric) if isinstance(dev, dict) else dev
        if isinstance(value, (int, float)) and not math.isnan(float(value)):
            points.append((int(entry["epoch"]), float(value)))
    return sorted(points)


def dev_curves(runs: Sequence[Run]) -> dict[tuple[str, str], list[tuple[Run, list[tuple[int, float]]]]]:
    """{(task, data): [(run, points)]} of the Table 1 runs that carry a per-epoch dev history."""
    chosen = [dataclasses.replace(r, embedder=f"{r.embedder}, adapted") if r.adapted else r
              for r in _budget_runs(runs) if r.is_default]
    out: dict[tuple[str, str], list[tuple[Run, list[tuple[int, float]]]]] = {}
    for run in sorted(chosen, key=lambda r: (r.task, r.data, r.embedder, r.seed)):
        points = dev_history(run)
        if points:
            out.setdefault((run.task, run.data), []).append((run, points))
    return out


def best_point(points: Sequence[tuple[int, float]]) -> tuple[int, float]:
    """The (epoch, dev) of the best dev score, the earliest epoch on a tie (the epoch early stopping keeps)."""
    return max(points, key=lambda p: (p[1], -p[0]))


def dev_curve_table(runs: Sequence[Run]) -> Table:
    rows, records = [], []
    for (task, data), curves in dev_curves(runs).items():
        for run, points in curves:
            best_epoch, best = best_point(points)
            rows.append([task, data, run.embedder, str(run.seed), str(len(points)), str(best_epoch), fmt(best),
                         fmt(points[-1][1])])
            records.append({"task": task, "data": data, "embedder": run.embedder, "seed": run.seed,
                            "metric": run.main_metric, "curve": [{"epoch": e, "dev": v} for e, v in points]})
    return Table("Dev curves: dev main metric per epoch", ["Task", "Data", "Embedder", "Seed", "Epochs",
                                                            "Best epoch", "Best dev", "Last dev"], rows,
                 ["From each Table 1 run's per-epoch history; the plot shows whether the dev curve had flattened "
                  "when training stopped."], key="dev_curves", records=records)


def _run_seconds(run: Run) -> float | None:
    """Every epoch's seconds (training + dev) from the history, plus reading, the biLM and the final evaluation:
    a resumed run's ``total_seconds`` covers only its last process, its history every epoch."""
    timings = run.record.timings
    epochs = [h.get("seconds") for h in run.record.history or [] if isinstance(h, dict)]
    if epochs and all(isinstance(s, (int, float)) for s in epochs):
        extra = [timings.get(k) for k in ("read_seconds", "bilm_seconds", "eval_seconds")]
        return float(sum(epochs) + sum(x for x in extra if isinstance(x, (int, float))))
    value = timings.get("total_seconds")
    return float(value) if isinstance(value, (int, float)) else None


def run_stopped_by(run: Run) -> str | None:
    """"patience" or "cap": recorded by the engine since it knows; for older results.json replayed from the stored
    config's stopping rule over the dev history (None when the epochs were scaled by the data fraction, a key is
    missing, or neither rule explains where the run ended)."""
    recorded = run.record.epochs.get("stopped_by")
    if recorded in ("patience", "cap"):
        return recorded
    points = dev_history(run)
    config = run.record.config
    override = {k: v for k, v in (config.get("trainer") or {}).items() if v is not None}
    if not points or override.get("scale_epochs"):
        return None
    try:
        rule = StoppingRule.of({**((config.get("task") or {}).get("trainer") or {}), **override})
    except (TypeError, ValueError):
        return None
    best_epoch = best_point(points)[0]
    if len(points) < rule.max_epochs and not rule.patience_spent(len(points), best_epoch):
        return None
    return rule.stopped_by(len(points), best_epoch)


def budget_table(runs: Sequence[Run]) -> Table:
    """What each Table 1 configuration cost: epochs trained, best epoch and wall time per run (README's budget)."""
    rows, records = [], []
    for (task, data), curves in dev_curves(runs).items():
        by_embedder: dict[str, list[tuple[Run, list[tuple[int, float]]]]] = {}
        for run, points in curves:
            by_embedder.setdefault(run.embedder, []).append((run, points))
        for embedder, group in sorted(by_embedder.items()):
            epochs = stat(float(len(points)) for _, points in group)
            best = stat(float(best_point(points)[0]) for _, points in group)
            known = [s / 60 for s in (_run_seconds(r) for r, _ in group) if s is not None]
            minutes = stat(known)
            at_cap = sum(run_stopped_by(r) == "cap" for r, _ in group)
            rows.append([task, data, embedder, str(len(group)), fmt(_mean(epochs), 1), fmt(_mean(best), 1),
                         f"{at_cap}/{len(group)}", fmt(_mean(minutes), 1), fmt(max(known), 1) if known else MISSING])
            records.append({"task": task, "data": data, "embedder": embedder, "runs": len(group),
                            "epochs": _mean(epochs), "best_epoch": _mean(best), "stopped_at_cap": at_cap,
                            "minutes": _mean(minutes)})
    return Table("CPU budget: what each run cost", ["Task", "Data", "Embedder", "Runs", "Epochs (mean)",
                                                    "Best epoch (mean)", "Stopped at the cap", "Minutes per run (mean)",
                                                    "Minutes (longest)"], rows,
                 ["Minutes of the whole run: every epoch's training and dev evaluation (from its history, so a resumed "
                  "run counts all of them), reading, the biLM cache on a miss and the final evaluation; "
                  "one torch thread; epochs counts every epoch trained, the early-stopping patience included.",
                  "Stopped at the cap: runs that the epoch cap ended while their dev score was still within the "
                  "patience of its best (not converged); the others stopped by early stopping."],
                 key="budget", records=records)


def _scale_setting(r: Run) -> tuple[bool, float, float | None]:
    elmo = r.elmo or {}
    dropout = elmo.get("dropout")
    return bool(elmo.get("layer_norm")), float(elmo.get("gamma_init", 1.0)), None if dropout is None else float(dropout)


def scale_ablation_table(runs: Sequence[Run]) -> Table:
    """The dev ablation behind each task's ``elmo.layer_norm`` / ``elmo.gamma_init`` / ``elmo.dropout`` defaults
    (issue 13): +ELMo runs with the learned mix and the task's lambda and placement, grouped by the effective layer
    norm, initial gamma and ELMo dropout; a (task, data) row group appears once it holds more than one setting."""
    chosen = [r for r in _budget_runs(runs) if r.has_elmo and r.mode == "learned" and not r.adapted
              and not r.overrides("lambda", "placement")]
    rows, records = [], []
    for (task, data), group in sorted(_group(chosen, lambda r: (r.task, r.data)).items()):
        settings = _group(group, _scale_setting)
        if len(settings) < 2:
            continue
        for (layer_norm, gamma, dropout), members in sorted(settings.items(), key=lambda item: (
                item[0][0], item[0][1], -1.0 if item[0][2] is None else item[0][2])):
            dev, test = stat(r.value("dev") for r in members), stat(r.value("test") for r in members)
            default = not any(r.overrides("layer_norm", "gamma_init", "dropout") for r in members)
            seeds = sorted({r.seed for r in members})
            rows.append([task, data, str(layer_norm).lower(), f"{gamma:g}", fmt(dropout, 2),
                         "yes" if default else "", fmt_stat(dev), ",".join(map(str, seeds))])
            records.append({"task": task, "data": data, "layer_norm": layer_norm, "gamma_init": gamma,
                            "dropout": dropout, "default": default, "dev": stat_json(dev), "test": stat_json(test),
                            "seeds": seeds})
    return Table("ELMo scale and dropout ablation: layer norm, initial gamma, ELMo dropout (dev)",
                 ["Task", "Data", "Layer norm", "Initial gamma", "ELMo dropout", "Task default", "Dev", "Seeds"],
                 rows,
                 ["Dev set only (the defaults in conf/task/*.yaml are chosen on it, never on test); mean ± std over "
                  "the seeds listed; learned mix with the task's lambda and placement."],
                 key="scale_ablation", records=records)


def non_finite_table(skipped: Sequence[tuple[Run, Sequence[tuple[str, float]]]]) -> Table:
    """The runs skipped for a non-finite metric (collect.non_finite), shown as such: a diverged run is never silently
    missing from Table 1's seed counts."""
    rows, records = [], []
    for run, metrics in skipped:
        for name, value in metrics:
            rows.append([run.task, run.data, run.embedder, str(run.seed), name, str(value), str(run.path)])
            records.append({"task": run.task, "data": run.data, "embedder": run.embedder, "seed": run.seed,
                            "metric": name, "value": str(value), "file": str(run.path)})
    return Table("Runs skipped: a metric is not finite", ["Task", "Data", "Embedder", "Seed", "Metric", "Value",
                                                          "File"], rows,
                 ["These runs are counted as skipped in the summary and left out of every table (a NaN or inf "
                  "metric: the run diverged); their seeds are missing from the n columns."], key="non_finite",
                 records=records)


def split_overlap_table(runs: Sequence[Run]) -> Table:
    """The share of each split's examples also in train (and of test in dev), as the runs recorded it
    (results.json ``data.split_overlap``, measured on the splits as read, before the training fraction): one row
    per task, data set and distinct shares; runs recorded without it are not rows."""
    found: dict[tuple[str, str, str], dict[str, float]] = {}
    for run in runs:
        shares = run.record.data.get("split_overlap")
        if isinstance(shares, dict) and shares:
            found[(run.task, run.data, repr(sorted(shares.items())))] = shares
    columns = sorted({name for shares in found.values() for name in shares},
                     key=lambda n: (n.split("_in_")[1] != "train", n))
    rows, records = [], []
    for (task, data, _), shares in sorted(found.items()):
        cells = [MISSING if shares.get(c) is None else f"{100 * float(shares[c]):.1f}%" for c in columns]
        rows.append([task, data, *cells])
        records.append({"task": task, "data": data, **{c: shares.get(c) for c in columns}})
    header = ["Task", "Data", *[c.replace("_in_", " in ") for c in columns]]
    return Table("Split overlap: examples also in an earlier split", header, rows,
                 ["Share of a split's examples whose text (the task's example key: its text fields' token lists; "
                  "SST: roots only) is also in train, or for test also in dev; measured on the splits as read, before "
                  "the training fraction. A run above data.max_overlap is refused."], key="split_overlap",
                 records=records)
