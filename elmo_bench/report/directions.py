"""The paper's qualitative claims ("directions") checked on the runs found, one row each: which hold on these runs,
which do not, with the numbers that decide it, so nobody has to read them off five tables.

The directions (Peters et al. 2018, and issue 13's goal):
- Table 1: +ELMo above the baseline, per task (test, mean over seeds; the task's row with the most training data
  that has both arms), and on how many of the tasks;
- the probes' own (each section's ``directions``, elmo_bench.report.sections): Table 6's first biLM layer above the
  second for POS, Table 5's second above the first for WSD;
- Figure 1: ELMo's relative error reduction largest at the smallest training fraction;
- Table 2: the learned mix (the task's own setting, Table 1's +ELMo run) at least as good as the top layer alone
  (dev).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from elmo_bench.report.collect import Run, seed_pairs
from elmo_bench.report.declared import PaperNumbers
from elmo_bench.report.diagnosis import table1_reason
from elmo_bench.report.encoder_names import kept_layers
from elmo_bench.report.run_tables import sample_efficiency_points
from elmo_bench.report.sections import NO_PLUGINS, ReportPlugins
from elmo_bench.report.selection import _budget_runs, _group
from elmo_bench.report.table import MISSING, Stat, Table, fmt_stat, relative_increase, stat
from elmo_bench.report.tables import NO_PAPER

#: issue 13's goal for Table 1 (the paper: all six)
TASKS_ABOVE_GOAL = 5
#: seeds per arm the goal asks for (fewer are shown, and named in the tasks row)
SEEDS_GOAL = 3


def _holds(flag: bool | None) -> str:
    return MISSING if flag is None else ("yes" if flag else "no")


def seed_counts(*stats: Stat | None) -> str:
    return "/".join(str(s.n if s else 0) for s in stats)


def above(a: Stat | None, b: Stat | None) -> bool | None:
    return None if a is None or b is None else a.mean > b.mean


def _paired_seed_wins(members: Sequence[Run]) -> str:
    """" (above on k of m paired seeds)" where both arms ran two or more seeds: a mean gap that one seed carries
    against the others' shows here, not only in the stds."""
    scored = [(base.value("test"), elmo.value("test")) for base, elmo in seed_pairs(members)]
    scored = [(b, e) for b, e in scored if b is not None and e is not None]
    if len(scored) < 2:
        return ""
    wins = sum(e > b for b, e in scored)
    return f" (above on {wins} of {len(scored)} paired seeds)"


def _table1_tasks(declared: Sequence[str], records: Sequence[dict[str, Any]]) -> list[str]:
    """The tasks the tasks row counts: the declared Table 1 tasks (those with a paper row); without declarations
    (no task_declarations.json beside the runs) the tasks whose both arms ran, never "1 of 0 tasks" (issue 45)."""
    return list(declared) or list(dict.fromkeys(r["task"] for r in records))


def _goal_met(above: int, missing: int) -> bool | None:
    """Whether +ELMo is above on enough tasks; None while the tasks not run yet could still decide it."""
    if above >= TASKS_ABOVE_GOAL:
        return True
    return False if above + missing < TASKS_ABOVE_GOAL else None


def _table1_rows(runs: Sequence[Run], adaptations: Sequence[dict[str, Any]], numbers: PaperNumbers
                 ) -> list[dict[str, Any]]:
    """Per task: GloVe vs +ELMo test on the largest training fraction where both arms ran (base biLM); a task
    where +ELMo is not above gets its measured reasons (elmo_bench.report.diagnosis)."""
    budget = _budget_runs(runs)
    chosen = [r for r in budget if r.is_default and not r.adapted]
    out = []
    by_task = _group(chosen, lambda r: r.task)
    order, declared = numbers.table1_order, numbers.table1
    for task in [t for t in order if t in by_task] + sorted(set(by_task) - set(order)):
        group = by_task[task]
        by_fraction = _group(group, lambda r: r.fraction)
        both = [f for f, rs in by_fraction.items() if {r.has_elmo for r in rs} == {False, True}]
        if not both:
            continue
        members = by_fraction[max(both)]
        base = stat(r.value("test") for r in members if not r.has_elmo)
        elmo = stat(r.value("test") for r in members if r.has_elmo)
        ref = declared.get(task)
        out.append({"direction": "elmo_above_baseline", "scope": f"{task}, {members[0].data}", "task": task,
                    "ours": f"{fmt_stat(base)} → {fmt_stat(elmo)}{_paired_seed_wins(members)}",
                    "paper": f"{ref['baseline']:.2f} → {ref['elmo']:.2f}" if ref else MISSING,
                    "holds": above(elmo, base), "n": seed_counts(base, elmo), "min_seeds": min(s.n if s else 0 for s in (base, elmo)),
                    "members": members,
                    "variants": [r for r in budget if r.task == task and r.data == members[0].data and r.has_elmo]})
    holding = {r["task"]: r["members"] for r in out if r["holds"]}
    for record in out:
        members, variants = record.pop("members"), record.pop("variants")
        record["reason"] = table1_reason(record["task"], members, adaptations, holding, variants) \
            if record["holds"] is False else ""
    return out


def probe_layers(runs: Sequence[Run], task: str, split_of: Callable[[Run], dict[str, Any] | None],
                  key: str) -> tuple[Stat | None, Stat | None]:
    """Mean layer-1 and layer-2 scores of a probe's runs (``key`` formatted with the layer number), over the runs
    with the most training data (as Table 1 takes its row with the most data), so a smaller bounded run (e.g.
    probe-suite's 2,000 sentences) never averages into a larger one."""
    probes = [r for r in runs if r.task == task]
    most = max((_train_size(r) for r in probes), default=0)
    probes = [r for r in probes if _train_size(r) == most]
    layer1, layer2 = (stat((split_of(r) or {}).get(key.format(k)) for r in probes) for k in (1, 2))
    return layer1, layer2


def _train_size(run: Run) -> float:
    """Training sentences of a probe run: ``train_sentences`` when it was cut (``--max-train-sentences``), else
    unbounded (the whole split)."""
    data = run.record.data
    cut = data.get("train_sentences") and not data.get("all_train_sentences")
    return float(data["train_sentences"]) if cut else float("inf")


def _figure1_rows(runs: Sequence[Run]) -> list[dict[str, Any]]:
    out = []
    for (task, data), curves in sample_efficiency_points(runs).items():
        base, elmo = curves.get("glove"), curves.get("glove_elmo")
        if not base or not elmo:
            continue
        common = sorted(set(base) & set(elmo))
        if len(common) < 2:
            continue
        gains = {f: relative_increase(base[f].mean, elmo[f].mean) for f in common}
        smallest = common[0]
        holds = all(gains[smallest] > gains[f] for f in common[1:])
        out.append({"direction": "gain_largest_at_smallest_fraction", "scope": f"{task}, {data}",
                    "ours": ", ".join(f"{100 * f:g}%: {gains[f]:+.1f}%" for f in common),
                    "paper": "largest at the smallest fraction", "holds": holds,
                    "n": ", ".join(seed_counts(base[f], elmo[f]) for f in common)})
    return out


def _mix_rows(runs: Sequence[Run], numbers: PaperNumbers) -> list[dict[str, Any]]:
    budget = [r for r in _budget_runs(runs) if r.has_elmo and not r.adapted]
    top = [r for r in budget if r.mode == "top" and not r.overrides("placement", "layer_norm", "dropout")]
    out, declared = [], numbers.column_table("table2")[0]
    for (task, data), tops in sorted(_group(top, lambda r: (r.task, r.data)).items()):
        seeds = {r.seed for r in tops}                # paired: the learned mix on the seeds mix=top ran
        learned_runs = [r for r in budget if r.task == task and r.data == data and r.is_default and r.seed in seeds]
        learned = stat(r.value("dev") for r in learned_runs)
        last = stat(r.value("dev") for r in tops)
        ref = declared.get(task)
        holds = None if learned is None or last is None else learned.mean >= last.mean
        out.append({"direction": "learned_mix_at_least_top_layer", "scope": f"{task}, {data}",
                    "ours": f"top {fmt_stat(last)}, learned {fmt_stat(learned)}",
                    "paper": f"top {ref['last_only']:.1f}, learned {ref['lambda_0.001']:.1f}" if ref else MISSING,
                    "holds": holds, "n": seed_counts(last, learned),
                    "reason": _mix_reason(learned, last, [r for r in budget if r.task == task and r.data == data
                                                          and r.is_default], learned_runs) if holds is False else ""})
    return out


def _mix_reason(learned: Stat, last: Stat, all_learned: Sequence[Run], paired: Sequence[Run]) -> str:
    """Why the learned mix is below mix=top: the gap against the learned mix's own seed-to-seed spread on dev,
    and its layer weights."""
    spread = stat(r.value("dev") for r in all_learned)
    parts = [f"gap {learned.mean - last.mean:+.2f}"
             + (f" against the learned mix's seed-to-seed dev std {spread.std:.2f} ({spread.n} seeds)"
                if spread and spread.std is not None else "")]
    weights = _learned_weights(paired)
    return "; ".join(parts + ([weights] if weights else []))


def _learned_weights(runs: Sequence[Run]) -> str:
    """The learned softmax layer weights (mean over the runs, per place ELMo enters): how far the mix is from the
    top layer alone, which mix=top puts all weight on."""
    by_site: dict[str, list[list[float]]] = {}
    for run in runs:
        for site, mix in sorted(run.mixes.items()):
            if isinstance(mix, dict) and mix.get("weights"):
                by_site.setdefault(site, []).append([float(w) for w in mix["weights"]])
    means = {site: [sum(column) / len(column) for column in zip(*weights)] for site, weights in by_site.items()}
    if not means:
        return ""
    shown = "; ".join(f"{site} " + " / ".join(f"{w:.2f}" for w in mean) for site, mean in means.items())
    kept = kept_layers(r.record for r in runs)          # encoder.layers kept a subset: its layers by number
    order = "0 / 1 / ..." if kept is None else " / ".join(str(k) for k in kept)
    return f"learned layer weights (layer {order}, mean over seeds): {shown}: the mix keeps weight on the " \
           f"lower layers, where mix=top uses the top layer alone"


def directions_table(runs: Sequence[Run], adaptations: Sequence[dict[str, Any]] = (),
                     numbers: PaperNumbers = NO_PAPER, plugins: ReportPlugins = NO_PLUGINS) -> Table:
    """``adaptations``: the lm_adaptation.json records (Table 7's), for the biLM's perplexity on a task's text;
    ``numbers``: the paper's numbers the tasks declare (the Table 1 tasks are those with a paper row);
    ``plugins``: the probes' sections, whose ``directions`` add their rows (POS, then WSD) after the tasks'."""
    records = _table1_rows(runs, adaptations, numbers)
    table1_tasks = _table1_tasks(numbers.table1_order, records)
    decided = [r for r in records if r["holds"] is not None and r["task"] in table1_tasks]
    above = sum(r["holds"] for r in decided)
    missing = [t for t in table1_tasks if t not in {r["task"] for r in decided}]
    few = [r["task"] for r in decided if r["min_seeds"] < SEEDS_GOAL]
    for record in records:
        del record["min_seeds"]  # the seed count is already in "n", as text
    caveats = ([f"not run: {', '.join(missing)}"] if missing else []) + (
        [f"fewer than {SEEDS_GOAL} seeds: {', '.join(few)}"] if few else [])
    records.append({"direction": "elmo_above_baseline_tasks", "scope": "Table 1 tasks",
                    "ours": f"{above} of {len(table1_tasks)} tasks" + (f" ({'; '.join(caveats)})"
                                                                       if caveats else ""),
                    "paper": f"{len(numbers.table1_order)} of {len(numbers.table1_order)}" if numbers.table1_order
                    else MISSING,
                    "holds": _goal_met(above, len(missing) if numbers.table1_order else TASKS_ABOVE_GOAL),
                    "n": MISSING})   # without declarations the tasks not run are unknown: the goal stays open
    for section in sorted((s for s in plugins.sections if s.directions is not None),
                          key=lambda s: (s.direction_order, s.key)):
        records += section.directions(runs)
    for direction, found, paper_text in (
            ("gain_largest_at_smallest_fraction", _figure1_rows(runs), "largest at the smallest fraction"),
            ("learned_mix_at_least_top_layer", _mix_rows(runs, numbers), "learned ≥ top (Table 2)")):
        records += found or [{"direction": direction, "scope": MISSING, "ours": "not run", "paper": paper_text,
                              "holds": None, "n": MISSING}]
    for record in records:
        record.setdefault("reason", "")
    rows = [[r["direction"], r["scope"], r["ours"], r["paper"], _holds(r["holds"]), r["n"], r["reason"] or MISSING]
            for r in records]
    notes = ["Each direction on the runs found (test for Table 1, the probes and Figure 1; dev for the mix): means over "
             "seeds, n = seeds (baseline/+ELMo, top/learned). Table 1 uses, per task, the row with the most training "
             "data that has both arms; the tasks row holds when +ELMo is above on at least "
             f"{TASKS_ABOVE_GOAL} of them (issue 13's goal; the paper: all six).",
             "Figure 1: relative error reduction (+ELMo − baseline) / (100 − baseline) at each training fraction. "
             "Mix: the task's own learned mix (Table 1's +ELMo run) against the top layer alone (mix=top), on the "
             "seeds mix=top ran.",
             "Measured reason (a Table 1 task where +ELMo is not above): whether it is below on dev too; the best dev "
             "each arm had reached when its training loss first fell to the baseline's loss at the baseline's best "
             "epoch (+ELMo minus baseline, mean over seeds; below zero: the ELMo features fit training data that does "
             "not carry over to dev, i.e. overfitting); the base biLM's perplexity on the task's dev text (Table 7) "
             "beside the tasks where +ELMo holds; the +ELMo variant tried on the same data with the best dev score "
             "(ablations, bilm=adapted, mix=top) and its test score, when it is not the task's own setting."]
    return Table("Directions: the paper's claims on these runs", ["Direction", "Scope", "Ours", "Paper", "Holds",
                                                                  "n", "Measured reason"], rows, notes, key="directions",
                 records=records)
