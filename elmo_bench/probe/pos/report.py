"""Probe pos's part of the report: Table 6 (accuracy per layer: the converged probe's records, task ``pos_probe``,
beside the pos task's single-layer runs, the engine-trained probe, and the paper's rows), its panels of the
probe-depth figure, and its Directions row (layer 1 above layer 2). The section claims the probe's record task and
the pos task's runs (the task declares Table 6 as its table), and says why a pos task run is in no table. Declared by
config.py (``report``); the report's framework (elmo_bench.report.sections) renders it."""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Sequence

from elmo_bench.report.collect import MIX_OVERRIDES, Run
from elmo_bench.report.directions import above, probe_layers, seed_counts
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.experiments import apart
from elmo_bench.report.sections import PAPER, DepthPanel, Rendered, Section, SectionInput, StepValue
from elmo_bench.report.selection import _data_label, layer_title
from elmo_bench.report.table import ENCODER_BLOCKS_NOTE, MISSING, Table, fmt, fmt_stat, stat

#: the record task of probe pos's results.json (its declaration's ``record_task``)
PROBE_TASK = "pos_probe"
#: the pos task, whose single-layer runs (``mix=layer``) Table 6 shows as the engine-trained probe
POS_TASK = "pos"
POS_CONVERGED = "POS (converged probe)"
POS_ENGINE = "POS (engine-trained probe)"
#: the paper's Table 6 (Peters et al. 2018; PTB WSJ test POS accuracy): biLM first / second biLSTM layer, our
#: layers 1 and 2; shown as "paper"
TABLE6_BILM: dict[int, float] = {1: 97.3, 2: 96.8}
#: Table 6's other rows: CoVe's first / second layer, and the supervised taggers
TABLE6_COVE: dict[int, float] = {1: 93.3, 2: 92.8}
TABLE6_OTHERS: dict[str, float] = {"Collobert et al. (2011)": 97.3, "Ma and Hovy (2016)": 97.6,
                                   "Ling et al. (2015)": 97.8}


POS_PROBE_ROWS = ("average", "glove", "most_frequent_tag")


def _pos_probe_label(run: Run) -> str:
    data = run.record.data
    sentences, full = data.get("train_sentences"), data.get("all_train_sentences")
    if sentences and not full:
        return f"{run.data} ({sentences} train sentences)"
    return run.data


def _with_words(label: str, words: str) -> str:
    """A row label with what sets its experiment apart: "ud_ewt (2000 train sentences; tags xpos)"."""
    if not words:
        return label
    return f"{label[:-1]}; {words})" if label.endswith(")") else f"{label} ({words})"


def _table6_rows(pos: Sequence[Run], probe: Sequence[Run], layers: Sequence[int], extra: Sequence[str],
                 any_probe: bool) -> list[list[str]]:
    """Rows of one encoder's POS runs: each converged probe's data, then each engine-trained probe's data."""
    rows = []
    for data, runs_d in [(_with_words(label, apart_by), part)
                         for label in sorted({_pos_probe_label(r) for r in probe})
                         for apart_by, part in apart([r for r in probe if _pos_probe_label(r) == label])]:
        cells = [stat((r.metrics.get("test") or {}).get(f"layer_{k}_accuracy") for r in runs_d) for k in layers]
        others = [stat((r.metrics.get("test") or {}).get(f"{name}_accuracy") for r in runs_d) for name in POS_PROBE_ROWS]
        rows.append([f"{data}, converged probe", *[fmt_stat(c) for c in cells], MISSING, *[fmt_stat(c) for c in others]])
    for data in sorted({r.data for r in pos}):
        runs_d = [r for r in pos if r.data == data]
        cells = [stat(r.value("test") for r in runs_d if r.mode == "layer" and r.layer_index == k) for k in layers]
        learned = stat(r.value("test") for r in runs_d if r.mode == "learned" and not r.overrides(*MIX_OVERRIDES))
        rows.append([f"{data}, engine-trained probe" if any_probe else data, *[fmt_stat(c) for c in cells],
                     fmt_stat(learned), *[MISSING] * len(extra)])
    return rows


def table6(runs: Sequence[Run], names: EncoderNames | None = None) -> Table:
    """POS accuracy per layer; with several encoders an Encoder column first and one row block per encoder (the
    paper's rows last, Encoder "paper")."""
    # a run on part of the training data is its own row, labelled with the fraction (issue 45: it was shown nowhere)
    pos = [dataclasses.replace(r, data=_data_label(r)) for r in runs if r.task == POS_TASK and r.has_elmo]
    probe = [r for r in runs if r.task == PROBE_TASK]
    names = names or EncoderNames([*pos, *probe])
    several = names.several([*pos, *probe])
    layers = sorted({r.layer_index for r in pos if r.mode == "layer" and r.layer_index is not None}
                    | {int(m.group(1)) for r in probe for k in (r.metrics.get("test") or {})
                       if (m := re.fullmatch(r"layer_(\d+)_accuracy", k))})
    layers = layers or [0, 1, 2]
    extra = ["average", "GloVe", "most frequent tag"] if probe else []
    if several:
        rows = [[names.label(key), *row] for key, group in names.split([*probe, *pos])
                for row in _table6_rows([r for r in group if r.task == POS_TASK],
                                        [r for r in group if r.task == PROBE_TASK], layers, extra, bool(probe))]
    else:
        rows = _table6_rows(pos, probe, layers, extra, bool(probe))
    lead = ["paper"] if several else []
    rows.append([*lead, "paper biLM (PTB WSJ)", *[fmt(TABLE6_BILM.get(k), 1) for k in layers], MISSING,
                 *[MISSING] * len(extra)])
    rows.append([*lead, "paper CoVe (PTB WSJ)", *[fmt(TABLE6_COVE.get(k), 1) for k in layers], MISSING,
                 *[MISSING] * len(extra)])
    others = "; ".join(f"{name} {value:.1f}" for name, value in TABLE6_OTHERS.items())
    notes = ["Test accuracy of a linear classifier on one frozen layer (mean ± std over seeds); layer 0 is the "
             "token layer, the paper's (and CoVe's) first and second biLSTM layers are our layers 1 and 2.",
             f"Paper, supervised taggers on PTB WSJ: {others}."]
    if probe:
        notes.insert(1, "Converged probe (elmo-bench probe-pos): features standardised with training statistics, "
                        "softmax classifier trained to convergence with full-batch L-BFGS, L2 chosen on dev; "
                        "average = the mean of all layers; most frequent tag = each word's most frequent training "
                        "tag (no classifier), on the same split.")
    if any("conll2000" in r.data for r in pos):
        notes.append("CoNLL-2000's POS column was tagged automatically (Brill tagger), not by hand.")
    if several:
        notes.append(ENCODER_BLOCKS_NOTE)
    header = [*(["Encoder"] if several else []), "Data", *[f"layer {k}" for k in layers], "learned mix", *extra]
    return Table(f"Table 6: POS probe, accuracy per {layer_title(names, [*pos, *probe])}", header, rows, notes,
                 key="table6")


def unshown(run: Run) -> str | None:
    """Why Table 6 does not show a run of the pos task (None: it does, as does every converged-probe record)."""
    if run.task != POS_TASK:
        return None
    if not run.has_elmo:
        return "POS run(s) without encoder layers (Table 6 compares layers)"
    if not (run.mode == "layer" and run.layer_index is not None
            or run.mode == "learned" and not run.overrides(*MIX_OVERRIDES)):
        return f"POS run(s) with mix={run.mode}{' and its settings changed' if run.mode == 'learned' else ''} " \
               f"(Table 6 shows single layers and the task's learned mix)"
    return None


def directions(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Table 6's direction: the first layer above the second (converged probe, test)."""
    layer1, layer2 = probe_layers(runs, PROBE_TASK, lambda r: r.metrics.get("test"), "layer_{}_accuracy")
    if not (layer1 and layer2):
        return []
    return [{"direction": "pos_layer1_above_layer2", "scope": "POS probe (test)",
             "ours": f"layer 1 {fmt(layer1.mean)}, layer 2 {fmt(layer2.mean)}",
             "paper": f"layer 1 {TABLE6_BILM[1]:.1f}, layer 2 {TABLE6_BILM[2]:.1f}",
             "holds": above(layer1, layer2), "n": seed_counts(layer1)}]


def _converged(run: Run) -> dict[int, float]:
    scores = run.metrics.get("test") or {}
    return {int(m.group(1)): float(v) for k, v in scores.items()
            if (m := re.fullmatch(r"layer_(\d+)_accuracy", k)) and isinstance(v, (int, float))}


def _engine(run: Run) -> dict[int, float]:
    value = run.value("test")
    return {} if value is None or run.mode != "layer" or run.layer_index is None else {run.layer_index: value}


def _most_frequent_tag(run: Run) -> float | None:
    value = (run.metrics.get("test") or {}).get("most_frequent_tag_accuracy")
    return float(value) if isinstance(value, (int, float)) else None


def depth(runs: Sequence[Run]) -> tuple[list[Run], list[DepthPanel]]:
    """The POS runs the depth figure considers and its panels: the converged probe per data (its most-frequent-tag
    baseline dotted), the engine-trained probe (full-data ``mix=layer`` runs) per data."""
    mine = [r for r in runs if r.task == PROBE_TASK or (r.task == POS_TASK and r.has_elmo)]
    converged: dict[str, list[Run]] = {}
    engine: dict[str, list[Run]] = {}
    for run in mine:
        if run.task == PROBE_TASK:
            converged.setdefault(_pos_probe_label(run), []).append(run)
        elif run.fraction == 1.0 and run.mode == "layer":
            engine.setdefault(run.data, []).append(run)
    return mine, ([DepthPanel(POS_CONVERGED, data, members, _converged, floor=_most_frequent_tag)
                   for data, members in converged.items()]
                  + [DepthPanel(POS_ENGINE, data, members, _engine) for data, members in engine.items()])


def by_step(run: Run) -> list[StepValue]:
    """The converged probe's test accuracy per layer, for the "by training step" section (a series point's record)."""
    return [StepValue("POS accuracy (test)", k, v) for k, v in sorted(_converged(run).items())] \
        if run.task == PROBE_TASK else []


def render(given: SectionInput) -> Rendered:
    return Rendered([table6(given.runs, given.names)])


SECTION = Section(key="table6", place=PAPER, order=6, claims=(POS_TASK,), render=render, depth=depth,
                  directions=directions, direction_order=5, unshown=unshown, by_step=by_step)
