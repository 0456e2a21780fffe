"""The paper's task tables as plain rows of strings, from grouped runs (elmo_bench.report.selection). Missing cells
are "—", never zeros.

Which runs feed which table (a run on a fraction of the training data is its own row, labelled with the fraction;
``bilm=adapted`` runs are Table 1 rows of their own and stay out of the others):
- Table 1: the task's paper configuration (GloVe baseline; +ELMo with a learned mix and no mix overrides), test.
- Table 2: dev; baseline, +ELMo top layer only, +ELMo learned mix with lambda 1 / 0.001 (placement as the task's).
- Table 3: dev; +ELMo learned mix with the task's lambda, by placement input / both / output.
- Tables 5 and 6 are the WSD and POS probes' sections (their folders' report.py, elmo_bench.report.sections).
- Table 7: biLM perplexity on task text before -> after fine-tuning on the task's training text (lm_adaptation.json).

Each Table keeps its rows as strings for Markdown/LaTeX and, where a table has numbers worth reading by machine,
``records`` (a list of dicts) for ``report.json``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

from elmo_bench.report.bootstrap import NO_STATISTICS
from elmo_bench.report.collect import MIX_OVERRIDES, Run
from elmo_bench.report.declared import PaperNumbers
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.selection import PValue, _budget_runs, _group, _table1_runs, _task_rows
from elmo_bench.report.table import MISSING, Table, _float, _increase, _mean, _paper_pm, fmt, fmt_stat, stat, stat_json

#: no declarations found: every paper cell missing
NO_PAPER = PaperNumbers()


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


