"""The paper's tables as plain rows of strings, from grouped runs. Missing cells are "—", never zeros.

Which runs feed which table (a run on a fraction of the training data is its own row, labelled with the fraction;
``bilm=adapted`` runs are Table 1 rows of their own and stay out of the others):
- Table 1: the task's paper configuration (GloVe baseline; +ELMo with a learned mix and no mix overrides), test.
- Table 2: dev; baseline, +ELMo top layer only, +ELMo learned mix with lambda 1 / 0.001 (placement as the task's).
- Table 3: dev; +ELMo learned mix with the task's lambda, by placement input / both / output.
- Table 5: the WSD probe's results (task "wsd"), F1 per layer per evaluation set.
- Table 6: the converged POS probe (``elmo-bench probe-pos``, task "pos_probe": every layer, their average, GloVe,
  the most-frequent-tag baseline) and engine POS runs (task "pos"), test accuracy.
- Table 7: biLM perplexity on task text before -> after fine-tuning on the task's training text (lm_adaptation.json).

Each Table keeps its rows as strings for Markdown/LaTeX and, where a table has numbers worth reading by machine,
``records`` (a list of dicts) for ``report.json``.
"""
from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from elmo_bench.records.stopping import StoppingRule
from elmo_bench.report.bootstrap import NO_STATISTICS
from elmo_bench.report.collect import MIX_OVERRIDES, Run
from elmo_bench.report.declared import PaperNumbers
from elmo_bench.report.encoder_names import EncoderNames, kept_layers

MISSING = "—"
#: no declarations found: every paper cell missing
NO_PAPER = PaperNumbers()
ADAPTED_LABEL = "+ELMo with bilm=adapted"
ENCODER_BLOCKS_NOTE = ("Encoders side by side: one row block per encoder (Encoder column; an encoder with fewer layers "
                       "leaves the deeper layer columns missing); the paper's rows (Encoder \"paper\") are the biLM's.")


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    key: str = ""                                        # report.json name, e.g. "table1"
    records: list[dict[str, Any]] | None = None          # machine-readable rows (else header → cell dicts)
    extra: dict[str, Any] = field(default_factory=dict)  # more machine-readable content (e.g. the paper's numbers)

    def as_json(self) -> dict[str, Any]:
        rows = self.records if self.records is not None else [dict(zip(self.header, r)) for r in self.rows]
        return {"title": self.title, "header": self.header, "rows": rows, "notes": self.notes, **self.extra}


@dataclass
class Stat:
    mean: float
    std: float | None
    n: int


def stat_json(s: Stat | None) -> dict[str, Any]:
    """{"mean", "std", "n"}; mean and std null when missing (std null for one seed)."""
    return {"mean": None, "std": None, "n": 0} if s is None else {"mean": s.mean, "std": s.std, "n": s.n}


def stat(values: Iterable[float | None]) -> Stat | None:
    """Mean and sample standard deviation (None for one value) of the values that exist."""
    found = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not found:
        return None
    return Stat(statistics.fmean(found), statistics.stdev(found) if len(found) > 1 else None, len(found))


def fmt(value: float | None, digits: int = 2) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def fmt_stat(s: Stat | None, digits: int = 2) -> str:
    if s is None:
        return MISSING
    return fmt(s.mean, digits) if s.std is None else f"{s.mean:.{digits}f} ± {s.std:.{digits}f}"


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


def _paper_pm(value: float, pm: str | None, digits: int = 2) -> str:
    return fmt(value, digits) if pm is None else f"{value:.{digits}f} ± {pm}"


def _float(text: str | None) -> float | None:
    return None if text is None else float(text)


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


def _p_cell(p_value: PValue | None, elmo_runs: list[Run], base_runs: list[Run],
            where: str, notes: list[str]) -> tuple[str, float | None]:
    """The p column's text and value (a note when it cannot be computed for a reason worth saying)."""
    if p_value is None or not base_runs or not elmo_runs:
        return MISSING, None
    p, why = p_value(elmo_runs, base_runs)
    if p is not None:
        return ("< 0.001" if p < 0.001 else f"{p:.3f}"), p
    if why != NO_STATISTICS:
        notes.append(f"{where}: no p-value: {why}.")
    return MISSING, None


def _table1_paper_cells(ref: Mapping[str, Any] | None) -> list[str]:
    """The paper's columns of a Table 1 row (the task's declared ``table1``): previous SOTA, its baseline, its
    +ELMo and its increase."""
    sota = (ref or {}).get("previous_sota")
    paper_abs, paper_rel = _increase(ref["baseline"], ref["elmo"]) if ref else (MISSING, MISSING)
    return [_paper_pm(sota[1], ref.get("previous_sota_std")) if sota else MISSING,
            fmt(ref["baseline"]) if ref else MISSING,
            _paper_pm(ref["elmo"], ref.get("elmo_std")) if ref else MISSING,
            f"{paper_abs} / {paper_rel}" if ref else MISSING]


def _declared_order(declared: Mapping[str, Any], order: Sequence[str]) -> list[str]:
    """The declaring tasks in the paper's row order, then any other declaring task by name."""
    return [*(t for t in order if t in declared), *sorted(set(declared) - set(order))]


def _table1_row(task: str, data: str, base_runs: list[Run], elmo_runs: list[Run], p_value: PValue | None,
                notes: list[str], where: str, ref: Mapping[str, Any] | None) -> tuple[list[str], dict[str, Any]]:
    """One Table 1 row (cells, report.json record) from a task's baseline and +encoder runs."""
    base, elmo = stat(r.value("test") for r in base_runs), stat(r.value("test") for r in elmo_runs)
    metric = (base_runs or elmo_runs)[0].main_metric if (base_runs or elmo_runs) else MISSING
    abs_inc, rel_inc = _increase(_mean(base), _mean(elmo))
    p_text, p = _p_cell(p_value, elmo_runs, base_runs, where, notes)
    paper_cells = _table1_paper_cells(ref)
    row = [task, data, metric, fmt_stat(base), fmt_stat(elmo), abs_inc, rel_inc,
           f"{base.n if base else 0}/{elmo.n if elmo else 0}", *paper_cells, p_text]
    return row, {"task": task, "data": data, "metric": metric, "baseline": stat_json(base), "elmo": stat_json(elmo),
                 "p": p}


TABLE1_NOTES = [
    "Test set, mean ± sample std over seeds; n = seeds (baseline/+ELMo). Increase: absolute, and relative = "
    "abs / (100 − baseline), the paper's relative error reduction.",
    "p: one-sided paired bootstrap over test examples (+ELMo better, seeds averaged), from each run's "
    "per-example statistics; every resample's metric is the exact corpus metric (accuracy, SQuAD F1, span F1 "
    "of NER and SRL, CoNLL coreference F1).",
    "Paper columns: the paper's Table 1 — previous state of the art, its baseline and +ELMo test numbers "
    "(± = the paper's standard deviation over five seeds, where it gives one).",
]
TABLE1_ENCODERS_NOTE = ("Encoders side by side: one row per encoder whose +encoder runs were found (its mixed layers "
                        "in place of ELMo's, the same GloVe baseline runs in every row); the paper's columns stand "
                        "beside the biLM rows only.")


def table1(runs: Sequence[Run], p_value: PValue | None = None, names: EncoderNames | None = None,
           numbers: PaperNumbers = NO_PAPER) -> Table:
    """Baseline vs +ELMo per task (test), beside the paper's numbers the tasks declare (``numbers``). With several
    encoders (EncoderNames.several) an Encoder column after Data and one row per (task, data, encoder); report.json
    rows then carry ``encoder`` (its label)."""
    chosen = _table1_runs(runs)
    names = names or EncoderNames(chosen)
    several = names.several(r for r in chosen if r.has_elmo)
    groups = _group(chosen, lambda r: (r.task, r.data, r.has_elmo))
    rows, notes, records = [], [], []
    declared = numbers.table1
    for task, data in _task_rows(chosen, numbers.table1_order):
        base_runs, elmo_all = groups.get((task, data, False), []), groups.get((task, data, True), [])
        blocks = names.split(elmo_all) if several else [(None, elmo_all)]
        for key, elmo_runs in blocks:
            where = f"{task} ({data})" + (f", {names.label(key)}" if several else "")
            ref = declared.get(task) if names.is_bilm(key) else None
            row, record = _table1_row(task, data, base_runs, elmo_runs, p_value, notes, where, ref)
            if several:
                row.insert(2, names.label(key))
                record["encoder"] = names.labels.get(key)
            rows.append(row)
            records.append(record)
    notes[:0] = TABLE1_NOTES + ([TABLE1_ENCODERS_NOTE] if several else [])
    header = ["Task", "Data", "Metric", "Baseline", "+ELMo", "Increase (abs)", "Increase (rel)", "n",
              "Paper previous SOTA", "Paper baseline", "Paper +ELMo", "Paper increase (abs / rel)", "p (bootstrap)"]
    if several:
        header[header.index("+ELMo")] = "+encoder"
        header.insert(2, "Encoder")
    reference = {task: {"previous_sota": {"system": ref["previous_sota"][0], "value": ref["previous_sota"][1],
                                          "std": _float(ref.get("previous_sota_std"))} if "previous_sota" in ref
                        else None,
                        "baseline": ref["baseline"], "elmo": ref["elmo"], "elmo_std": _float(ref.get("elmo_std"))}
                 for task, ref in ((t, declared[t]) for t in _declared_order(declared, numbers.table1_order))}
    return Table("Table 1: baseline vs +ELMo (test)", header, rows, notes, key="table1", records=records,
                 extra={"paper": reference})


def _own_mix_but(r: Run, varied: str) -> bool:
    """Every mix setting but ``varied`` (the one a table compares) is the task's own: a mix key added to
    MIX_OVERRIDES keeps its ablation arms out of Tables 2-3 without touching their column filters."""
    return not r.overrides(*(key for key in MIX_OVERRIDES if key != varied))


def _is_variant(r: Run) -> bool:
    """An ablation run of Tables 2-3: +ELMo with another mix mode or a mix override of lambda or placement."""
    return r.has_elmo and (r.mode != "learned" or r.overrides("lambda", "placement"))


TABLE2_COLUMNS: dict[str, Callable[[Run], bool]] = {
    "baseline": lambda r: not r.has_elmo,
    "last_only": lambda r: r.has_elmo and r.mode == "top" and _own_mix_but(r, "lambda"),
    "lambda_1": lambda r: r.has_elmo and r.mode == "learned" and r.l2_coef == 1.0 and _own_mix_but(r, "lambda"),
    "lambda_0.001": lambda r: r.has_elmo and r.mode == "learned" and r.l2_coef == 0.001 and _own_mix_but(r, "lambda"),
}


def _column_table(title: str, runs: Sequence[Run], columns: dict[str, Callable[[Run], bool]],
                  labels: Sequence[str], reference: dict[str, dict[str, float]], order: Sequence[str],
                  notes: list[str]) -> Table:
    # a budget run on a fraction of the training data is its own row, labelled with the fraction (as in Table 1)
    data_runs = [r for r in _budget_runs(runs) if not r.adapted]
    used = [r for r in data_runs if any(test(r) for test in columns.values())]
    # a (task, data) row appears when it holds a run of this table's variants (not only default runs that happen to
    # fill a column, e.g. a sample-efficiency point); the paper's tasks always appear
    variant_rows = {(r.task, r.data) for r in used if _is_variant(r)}
    shown = [r for r in used if (r.task, r.data) in variant_rows
             and any(test(r) for name, test in columns.items() if name != "baseline")]
    pairs = [(t, d) for t, d in _task_rows(shown, order)]
    rows = []
    for task, data in pairs:
        stats = [stat(r.value("dev") for r in used if r.task == task and r.data == data and test(r))
                 for test in columns.values()]
        # seeds behind each column: a ± over two seeds and a lone number must not read alike
        seeds = "/".join(str(s.n if s else 0) for s in stats) if any(stats) else MISSING
        ref = reference.get(task)
        paper_cell = " / ".join(fmt(ref.get(name), 1) for name in columns) if ref else MISSING
        rows.append([task, data, *(fmt_stat(s) for s in stats), seeds, paper_cell])
    notes = [*notes, "n: seeds behind each column, left to right."]
    return Table(title, ["Task", "Data", *labels, "n", "Paper (" + " / ".join(labels) + ")"], rows, notes)


def table2(runs: Sequence[Run], numbers: PaperNumbers = NO_PAPER) -> Table:
    return dataclasses.replace(_column_table(
        "Table 2: all biLM layers vs the last one only (dev)", runs, TABLE2_COLUMNS,
        ["Baseline", "Last only", "All, λ=1", "All, λ=0.001"], *numbers.column_table("table2"),
        ["Dev set, mean ± std over seeds. Placement, layer norm and dropout are the task's paper settings."]),
        key="table2")


TABLE3_COLUMNS: dict[str, Callable[[Run], bool]] = {
    place: (lambda r, place=place: r.has_elmo and r.mode == "learned" and r.placement == place
            and _own_mix_but(r, "placement"))
    for place in ("input", "both", "output")
}


def table3(runs: Sequence[Run], numbers: PaperNumbers = NO_PAPER) -> Table:
    return dataclasses.replace(_column_table(
        "Table 3: where ELMo enters the task model (dev)", runs, TABLE3_COLUMNS,
        ["Input only", "Input & output", "Output only"], *numbers.column_table("table3"),
        ["Dev set, mean ± std over seeds; learned mix with the task's paper lambda, layer norm and dropout."]),
        key="table3")


def layer_title(names: EncoderNames, runs: Iterable[Run]) -> str:
    """Whose layers a probe table shows, for its title: "biLM layer" when every run is a biLM's (the paper's
    wording), "<encoder> layer" for one other encoder, "encoder layer" for several (issue 45: a MiniLM row under
    "per biLM layer")."""
    keys = list(dict.fromkeys(r.encoder_key for r in runs if r.encoder_key is not None))
    if all(names.is_bilm(k) for k in keys):
        return "biLM layer"
    return f"{names.label(keys[0])} layer" if len(keys) == 1 else "encoder layer"


def table7(adaptations: Sequence[dict[str, Any]], numbers: PaperNumbers = NO_PAPER) -> Table:
    """Perplexity on each task's text before -> after fine-tuning the biLM on its training text (paper Table 7).

    One row per (task, data, text, base biLM): each seed's adapted run fine-tunes its own copy, so the seeds' "after"
    perplexities are averaged (mean ± sample std, n = adapted biLMs) rather than listed as unlabelled duplicates."""
    by_task = _group(adaptations, lambda a: a["task"])
    rows, records = [], []
    declared, order = numbers.table7, numbers.table7_order
    for task in [*order, *sorted(set(by_task) - set(order))]:
        ref = declared.get(task)
        groups = _group(by_task.get(task) or [], lambda a: (a.get("data") or task, a["text"], a.get("base_bilm")))
        for key, found in (sorted(groups.items(), key=lambda kv: str(kv[0])) or [(None, [])]):
            before = stat(a["before"]["average"] for a in found)
            after = stat(a["after"]["average"] for a in found)
            label, text = (key[0], key[1]) if key else (MISSING, MISSING)
            rows.append([task, label, text, fmt(before.mean if before else None, 1), fmt_stat(after, 1),
                         str(len(found)),
                         ref[0] if ref else MISSING, fmt(ref[1], 1) if ref else MISSING,
                         fmt(ref[2], 1) if ref else MISSING])
            records.append({"task": task, "data": key[0] if key else None, "text": key[1] if key else None,
                            "before": before.mean if before else None, "after": after.mean if after else None,
                            "after_std": after.std if after else None, "n": len(found),
                            "tokens": found[0].get("tokens") if found else None,
                            "paper": {"data": ref[0], "before": ref[1], "after": ref[2]} if ref else None})
    notes = ["Perplexity (mean of the forward and backward LMs) on the task's text, measured with the base biLM and "
             "with the biLM fine-tuned for the task on its training text only (lm_adaptation.json, written by the "
             "adapted-biLM step); n = adapted biLMs (one per seed), After = their mean ± sample std.",
             "Paper: its Table 7 (the paper leaves CoNLL-2012 after tuning blank; SQuAD shown for its contexts)."]
    return Table("Table 7: biLM perplexity before → after task fine-tuning",
                 ["Task", "Data", "Text", "Before", "After", "n", "Paper data", "Paper before", "Paper after"],
                 rows, notes, key="table7", records=records)


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
