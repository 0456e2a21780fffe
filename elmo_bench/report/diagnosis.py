"""Measured reasons beside a Table 1 direction that fails, so the report shows why instead of leaving a guess.

Three measurements, each read from what the runs already recorded:
- **dev**: whether +ELMo also loses on dev (the split settings were chosen on), or only on test;
- **generalisation at equal training loss**: per seed pair, the best dev metric each arm had reached by the first
  epoch its training loss fell to the baseline's loss at the baseline's best epoch. +ELMo always fits the training
  set faster (more features), so comparing at the same epoch says little; at the same training loss a lower dev
  score means the ELMo features let the head fit training data that does not carry over (overfitting);
- **domain**: the base biLM's perplexity on the task's dev text (Table 7's "before", from lm_adaptation.json),
  beside the same measure for the tasks where +ELMo holds: a biLM that models the task's text worse gives less;
- **tuning**: the +ELMo variant tried on the same data (ablation arms, ``bilm=adapted``, ``mix=top``) with the best
  dev score, and its test score, when it is not the task's own setting: whether a dev-chosen change would rescue it.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from elmo_bench.records.elmo_settings import RECORDED_KEY
from elmo_bench.report.collect import MIX_OVERRIDES, Run, seed_pairs
from elmo_bench.report.table import Stat, fmt_stat, stat


def dev_at_training_loss(history: Sequence[dict[str, Any]], loss: float) -> float | None:
    """Best dev metric reached up to the first epoch whose training loss is at most ``loss``; None if never."""
    best: float | None = None
    for epoch in history:
        dev = epoch.get("dev_metric")
        if dev is not None:
            best = float(dev) if best is None else max(best, float(dev))
        if epoch.get("loss") is not None and float(epoch["loss"]) <= loss:
            return best
    return None


def _history(run: Run) -> list[dict[str, Any]]:
    return [e for e in run.record.history or [] if isinstance(e, dict)]


def equal_loss_gap(members: Sequence[Run]) -> Stat | None:
    """+ELMo's dev minus the baseline's at the baseline's best-epoch training loss, over seeds with both arms."""
    gaps = []
    for base, elmo in seed_pairs(members):
        base_history, elmo_history = _history(base), _history(elmo)
        scored = [e for e in base_history if e.get("dev_metric") is not None and e.get("loss") is not None]
        if not scored or not elmo_history:
            continue
        loss = float(max(scored, key=lambda e: float(e["dev_metric"]))["loss"])
        base_dev, elmo_dev = dev_at_training_loss(base_history, loss), dev_at_training_loss(elmo_history, loss)
        if base_dev is not None and elmo_dev is not None:
            gaps.append(elmo_dev - base_dev)
    return stat(gaps)


def base_perplexities(adaptations: Sequence[dict[str, Any]], bilm_hash: str | None) -> dict[str, float]:
    """Task → the base biLM's perplexity (mean of both directions) on that task's dev text."""
    out: dict[str, float] = {}
    for record in adaptations:
        if record.get("text") != "dev" or (bilm_hash and record.get("base_bilm") != bilm_hash):
            continue
        before = (record.get("before") or {}).get("average")
        if before is not None:
            out.setdefault(str(record["task"]), float(before))
    return out


def _signed(value: float) -> str:
    return f"{'+' if value >= 0 else '−'}{abs(value):.2f}"


def variant_label(run: Run) -> str:
    """How a +ELMo run differs from its task's own setting, e.g. ``mix.dropout=0.5`` or ``bilm=adapted``."""
    def value(key: str) -> Any:              # the effective value: an old default's run has no mix override
        found = (run.elmo or {}).get(RECORDED_KEY[key])
        found = run.mix_config.get(key) if found is None else found
        return str(found).lower() if isinstance(found, bool) else found

    parts = [f"mix.{key}={value(key)}" for key in MIX_OVERRIDES if run.overrides(key)]
    parts += ([f"mix={run.mode}"] if run.mode and run.mode != "learned" else []) + (
        ["bilm=adapted"] if run.adapted else [])
    return ",".join(parts) or "task default"


def best_dev_variant(variants: Sequence[Run]) -> tuple[str, Stat, Stat | None] | None:
    """(label, dev, test) of the +ELMo variant with the highest mean dev score among ``variants``."""
    groups: dict[str, list[Run]] = {}
    for run in variants:
        if run.has_elmo and run.value("dev") is not None:
            groups.setdefault(variant_label(run), []).append(run)
    scored = [(label, stat(r.value("dev") for r in rs), stat(r.value("test") for r in rs))
              for label, rs in groups.items()]
    found = [(label, dev, test) for label, dev, test in scored if dev is not None]
    return max(found, key=lambda item: item[1].mean) if found else None


def table1_reason(task: str, members: Sequence[Run], adaptations: Sequence[dict[str, Any]],
                  holding: Mapping[str, Sequence[Run]], variants: Sequence[Run] = ()) -> str:
    """One line of measured reasons for a task where +ELMo is not above the baseline (``members``: its Table 1
    runs), each measure beside its value on the tasks where +ELMo holds (``holding``: task → their runs);
    ``variants``: every +ELMo run of the task on the same data, for the dev-best variant."""
    parts = []
    base_dev = stat(r.value("dev") for r in members if not r.has_elmo)
    elmo_dev = stat(r.value("dev") for r in members if r.has_elmo)
    if base_dev and elmo_dev:
        where = "below on dev too" if elmo_dev.mean < base_dev.mean else "above on dev, below on test only"
        parts.append(f"{where} ({fmt_stat(base_dev)} → {fmt_stat(elmo_dev)})")
    gap = equal_loss_gap(members)
    if gap is not None:
        verdict = "overfits" if gap.mean < 0 else "generalises as well"
        spread = f" ± {gap.std:.2f}" if gap.n > 1 else ""
        others = [f"{t} {_signed(g.mean)}" for t, g in ((t, equal_loss_gap(rs)) for t, rs in holding.items()) if g]
        parts.append(f"dev at the baseline's best training loss {_signed(gap.mean)}{spread} (n {gap.n}): {verdict}"
                     + (f" (where +ELMo holds: {', '.join(others)})" if others else ""))
    bilm = next(((r.record.bilm or {}).get("hash") for r in members if r.has_elmo), None)
    perplexity = base_perplexities(adaptations, bilm)
    if task in perplexity:
        others = [f"{t} {perplexity[t]:.0f}" for t in holding if t in perplexity]
        parts.append(f"biLM perplexity on its dev text {perplexity[task]:.0f}"
                     + (f" (where +ELMo holds: {', '.join(others)})" if others else ""))
    best = best_dev_variant(variants)
    if best is not None and best[0] != "task default":
        label, dev, test = best
        base_test = stat(r.value("test") for r in members if not r.has_elmo)
        parts.append(f"dev-best +ELMo variant tried: {label}, dev {fmt_stat(dev)}, test {fmt_stat(test)} "
                     f"(baseline test {fmt_stat(base_test)}; n {dev.n})")
    return "; ".join(parts)
