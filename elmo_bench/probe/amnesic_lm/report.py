"""Probe amnesic_lm's part of the report, declared by config.py (``report``): the amnesic table (issue 47 item 4): what erasing a concept inside an encoder does, per encoder, concept
and erased layer, beside removing random directions of the same rank, and beside the published direction.

- From ``probe=amnesic_lm`` records (``amnesic_lm_probe``, ``metrics.dev``): the biLM's perplexity un-erased,
  erased and under the random control (its Δ to the un-erased), the mean KL to the un-erased distribution, top-1
  accuracy (%), the one-sided paired bootstrap p of "erasing costs more log-likelihood than the random control";
- from task runs with ``encoder.erase`` set (``python run.py task=edge_dep encoder.erase.concept=upos ...``): the
  Δ of the test main metric, erased − un-erased and random − un-erased, each erased run paired with the run of the
  same experiment but for ``encoder.erase`` (:func:`pair_key`; ``seed`` included: a pair per training seed; the
  random control's erase seeds averaged first, then the pairs).

Erased task runs are kept out of every older table (the section takes them, :func:`erased`: their encoder record
names the biLM alone, they would read as seeds of the un-erased runs), so a report over runs without these records
renders exactly as before.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames, key_of
from elmo_bench.report.probe_common import Keyed, base_identity, weights_label
from elmo_bench.report.sections import Rendered, Section, SectionInput
from elmo_bench.report.table import MISSING, Stat, Table, fmt, fmt_stat, stat, stat_json

AMNESIC = "amnesic_lm_probe"
#: the one-sided bootstrap's level for "as the paper's direction"
LEVEL = 0.05
LM_KEYS = ("ppl_none", "ppl_erased", "ppl_random", "kl_erased", "kl_random", "top1_none", "top1_erased",
           "top1_random", "p")
PAPER = ("paper: Elazar, Ravfogel, Jacovi & Goldberg 2021 (amnesic probing), BERT-base-uncased's masked-LM head on "
         "its last layer's output, INLP erasure, English UD treebank (POS, dependency labels; the paper's "
         "en-universal files, McDonald et al. 2013) and OntoNotes (named entities, phrase boundaries): removing part "
         "of speech or dependency labels lowers the LM's top-1 accuracy and raises its KL to the un-erased "
         "distribution far more than removing as many random directions")
NO_TASK_RUNS = ("no task runs with encoder.erase set below these directories (python run.py task=edge_dep "
                "encoder.erase.concept=upos encoder.erase.layer=K encoder.erase.path=DIR, with "
                "encoder.erase.control=random and without encoder.erase, on one config)")
NO_LM = "no probe=amnesic_lm record (an encoder without an LM head, e.g. MiniLM, has none)"


def erased(run: Run) -> bool:
    """A task run with an encoder erased: this section's (taken out of the task tables), never a task table's."""
    return run.erase is not None


def pair_key(run: Run) -> str:
    """The run's experiment (``Run.signature``: task, seed, data, mix, head, trainer, encoder identity: the key the
    report itself tells experiments apart by), less ``encoder.erase``: erased, random and un-erased runs of one
    config share it, also when the un-erased run was recorded by an earlier version with fewer config keys (the
    committed MiniLM edge_dep runs), and never across encoders, seeds or mixes."""
    key = json.loads(run.signature())
    key.pop("erase", None)
    if key.get("encoder") is not None:              # a transformer's identity names its eraser: not part of the pair
        key["encoder"] = key_of(_identity(run))
    return json.dumps(key, sort_keys=True, default=str)


@dataclass
class Row:
    """One encoder (and its weights), concept, erased layer and control kind (``random`` or ``orth``: never averaged
    together, they remove different directions): its amnesic_lm records and its task pairs."""

    encoder: str
    weights: str
    concept: str
    layer: int
    control: str = "random"
    lm: list[Run] = field(default_factory=list)
    #: task (name, main metric) → per training seed (Δ erased, Δ random: None when not run)
    deltas: dict[tuple[str, str], list[tuple[float | None, float | None]]] = field(default_factory=dict)


def _identity(run: Run) -> dict[str, Any]:
    ident = base_identity(run.record)
    ident.pop("erase", None)
    return ident


def task_deltas(erased: Sequence[Run], plain: Sequence[Run]) -> dict[tuple, dict[tuple, list]]:
    """{(encoder key, weights, concept, layer): {(task, metric): [(Δ erased, Δ random) per training seed]}}: each
    erased config paired with its un-erased run (configs without one are left out)."""
    base = {pair_key(r): r for r in plain if r.task != AMNESIC}
    found: dict[tuple, dict[str, list[float]]] = {}
    for run in erased:
        erase = run.erase
        key = pair_key(run)
        if erase is None or key not in base or run.value("test") is None:
            continue
        variant = str(erase["control"]) if "control" in erase and erase["control"] != "none" else "erased"
        slot = (key_of(_identity(run)), weights_label(run.record), str(erase["concept"]), int(erase["layer"]), key)
        found.setdefault(slot, {"erased": []}).setdefault(variant, []).append(run.value("test"))
    out: dict[tuple, dict[tuple, list]] = {}
    for (encoder, weights, concept, layer, key), values in found.items():
        none = base[key]
        mean = {v: sum(xs) / len(xs) - none.value("test") if xs else None for v, xs in values.items()}
        for control in sorted(set(values) - {"erased"}) or ["random"]:      # the erased Δ beside each control's
            out.setdefault((encoder, weights, concept, layer, control), {}).setdefault(
                (none.task, none.main_metric), []).append((mean["erased"], mean.get(control)))
    return out


def lm_layers(run: Run) -> list[int]:
    return sorted({int(k[len("layer_"):-len("_ppl_erased")]) for k in (run.metrics.get("dev") or {})
                   if k.startswith("layer_") and k.endswith("_ppl_erased")})


def rows_of(runs: Sequence[Run], plain: Sequence[Run]) -> tuple[list[Row], bool]:
    """The table's rows in report order (biLMs first), and whether any task pair was found."""
    erased = [r for r in runs if r.task != AMNESIC]
    keyed = [Keyed(r.record, _identity(r)) for r in runs]
    names = EncoderNames(keyed)
    found: dict[tuple, Row] = {}
    for run, k in zip(runs, keyed):
        if run.task != AMNESIC:
            continue
        concept = str(run.record.data.get("tags") or "upos")
        control = str(((run.record.config or {}).get("probe") or {}).get("control") or "random")
        for layer in lm_layers(run):
            slot = (k.encoder_key, weights_label(run.record), concept, layer, control)
            found.setdefault(slot, Row(names.label(slot[0]), slot[1], concept, layer, control)).lm.append(run)
    deltas = task_deltas(erased, plain)
    for slot, per_task in deltas.items():
        found.setdefault(slot, Row(names.label(slot[0]), *slot[1:])).deltas = per_task
    order = {key: i for i, key in enumerate(names.order)}
    ranked = sorted(found, key=lambda s: (order.get(s[0], len(order)), s[1] != "trained", s[2], s[3], s[4]))
    return [found[s] for s in ranked], bool(deltas)


def lm_stat(row: Row, what: str) -> Stat | None:
    return stat(r.value("dev", f"layer_{row.layer}_{what}") for r in row.lm)


def difference(a: Stat | None, b: Stat | None) -> float | None:
    return None if a is None or b is None else a.mean - b.mean


def holds(found: dict[str, Stat | None]) -> bool | None:
    """As the paper's direction when p < LEVEL (erasing costs more log-likelihood than the random control); against
    it when the erased perplexity is not above the random control's; None: not decided at this level, or no LM."""
    p, erased, random = found["p"], found["ppl_erased"], found["ppl_random"]
    if p is None or erased is None or random is None:
        return None
    if p.mean < LEVEL:
        return True
    return False if erased.mean <= random.mean else None


def delta_cells(row: Row) -> tuple[str, str, dict[str, Any]]:
    """The Δ task metric cells (erased, random) and their record: per task, the mean over training seeds."""
    if not row.deltas:
        return MISSING, MISSING, {}
    cells, record = {"erased": [], "random": []}, {}
    for (task, metric), pairs in sorted(row.deltas.items()):
        record[task] = {"metric": metric}
        for i, variant in enumerate(("erased", "random")):
            found = stat(pair[i] for pair in pairs)
            record[task][variant] = stat_json(found)
            cells[variant].append(f"{task} {metric} {MISSING if found is None else format(found.mean, '+.2f')}")
    return "; ".join(cells["erased"]), "; ".join(cells["random"]), record


def _row(row: Row) -> tuple[list[str], dict[str, Any]]:
    found = {k: lm_stat(row, k) for k in LM_KEYS}
    verdict = holds(found)
    erased_task, random_task, task_record = delta_cells(row)
    d_erased = difference(found["ppl_erased"], found["ppl_none"])
    d_random = difference(found["ppl_random"], found["ppl_none"])
    cells = [row.encoder, row.weights, row.concept, f"layer_{row.layer}", row.control, fmt_stat(found["ppl_none"]),
             fmt(d_erased), fmt(d_random), fmt_stat(found["kl_erased"], 4), fmt_stat(found["kl_random"], 4),
             fmt_stat(found["top1_none"]), fmt_stat(found["top1_erased"]), fmt_stat(found["top1_random"]),
             fmt_stat(found["p"], 3), erased_task, random_task,
             MISSING if verdict is None else ("yes" if verdict else "no")]
    record = {"encoder": row.encoder, "weights": row.weights, "concept": row.concept, "layer": row.layer,
              "control": row.control, "holds": verdict, "dev": {k: stat_json(v) for k, v in found.items()},
              "delta_ppl_erased": d_erased, "delta_ppl_random": d_random, "delta_task": task_record}
    return cells, record


def amnesic_table(runs: Sequence[Run], plain: Sequence[Run]) -> Table:
    """Rows: encoder × weights × concept × erased layer × control (``runs``: the section's: its records and the erased task runs; ``plain``: every
    other run, where the erased task runs' un-erased partners are)."""
    rows, any_task = rows_of(runs, plain)
    header = ["Encoder", "Weights", "Concept", "Layer", "Control", "ppl", "Δ ppl erased", "Δ ppl control",
              "KL erased", "KL control", "top-1 %", "top-1 erased %", "top-1 control %", "p", "Δ task erased",
              "Δ task control", "paper's direction holds"]
    made = [_row(row) for row in rows]
    sentences = sorted({int(n) for r in runs if r.task == AMNESIC and (n := r.record.data.get("dev_sentences"))})
    notes = [
        "Amnesic probing (Elazar et al. 2021) with LEACE erasers (probe=erasure) applied inside the encoder at the "
        "erased layer, every later layer recomputed. LM columns (probe=amnesic_lm, the biLM's own softmax, UD "
        "English-EWT dev" + (f", {', '.join(map(str, sentences))} sentences" if sentences else "") + "): ppl = the "
        "mean of the forward and backward LM's perplexity un-erased; Δ ppl = erased (or random control) − un-erased; "
        "KL = the mean KL(un-erased ‖ erased) per prediction, nats; top-1 = the share of predictions whose argmax is "
        "the gold word; control = directions of the same rank (mean over its seeds; random: the eraser's whitening "
        "and mean on a random orthonormal frame, orth: amnesic probing's uniform random directions projected out; "
        "a row per control, never averaged together); p = one-sided paired bootstrap over dev sentences that "
        "erasing costs more log-likelihood than the control. Where there is none: "
        + NO_LM + ".",
        "Δ task = the test main metric of a task run with encoder.erase on − that of the run of the same experiment "
        "(task, data, mix, head, trainer, encoder, seed) but for encoder.erase (mean over training seeds; a "
        "control's erase seeds averaged first)."
        + ("" if any_task else " Here: " + NO_TASK_RUNS + "."),
        PAPER + f". Ours holds when p < {LEVEL}, and is against it when the erased perplexity is not above the random "
        "control's (the direction, not the numbers, is compared: another model, eraser and measure).",
    ]
    extra = {"paper": {"source": "Elazar, Ravfogel, Jacovi & Goldberg 2021 (amnesic probing)",
                       "encoder": "BERT-base-uncased (masked-LM head, last layer)", "eraser": "INLP",
                       "data": "English UD treebank (McDonald et al. 2013; POS, dependency labels) and OntoNotes",
                       "direction": "removing part of speech or dependency labels lowers the LM's top-1 accuracy "
                                    "and raises its KL far more than removing as many random directions"},
             "level": LEVEL, "task_runs": any_task}
    return Table("Amnesic probing: erasing a concept inside the encoder, against random directions of the same rank",
                 header, [c for c, _ in made], notes, key="amnesic", records=[r for _, r in made], extra=extra)


def render(given: SectionInput) -> Rendered:
    return Rendered([amnesic_table(given.runs, given.task_runs)])


SECTION = Section(key="amnesic", order=4, take=erased, render=render, summary="Amnesic-probing runs")
