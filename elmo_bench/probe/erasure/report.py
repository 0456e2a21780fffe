"""Probe erasure's part of the report, declared by config.py (``report``): per encoder (trained and random-weights
twins as separate row blocks), label set and layer, what ``probe=erasure`` records (``erasure_probe``: a linear
probe's accuracy and bits before and after LEACE, the majority share, the prior's bits, the eraser's rank) beside
the published direction, marked as the paper's. It shares its section with probe conditional (its key), which
says the group's summary; a report over runs without these records renders exactly as before."""
from __future__ import annotations

import re
from typing import Any, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.probe_blocks import Block, blocks, cell, once
from elmo_bench.report.sections import Rendered, Section, SectionInput
from elmo_bench.report.table import MISSING, Stat, Table, fmt, fmt_stat, stat_json

ERASURE = "erasure_probe"


ERASURE_KEYS = ("rank", "accuracy_before", "accuracy_after", "bits_before", "bits_after")


PAPER_ERASURE = ("paper: Belrose et al. 2023 (LEACE), a guarantee on the data the eraser is fitted on, for any "
                 "encoder and concept: after erasure no linear classifier beats the constant predictor")


#: the issue's completeness check: accuracy within this many points of the majority share, bits within this of the prior
ERASURE_TOLERANCE = (0.5, 0.02)

def erasure_layers(block: Block) -> list[int]:
    return sorted({int(m.group(1)) for r in block.runs for k in (r.metrics.get("test") or {})
                   if (m := re.fullmatch(r"layer_(\d+)_rank", k))})


def guard_holds(found: dict[str, Stat | None], majority: Stat | None, prior: Stat | None) -> bool | None:
    """The paper's direction on held-out test: accuracy after erasure not above the majority share (by more than
    0.5 points) and bits not below the prior's (by more than 0.02); None when a number is missing."""
    after, bits = found["accuracy_after"], found["bits_after"]
    if None in (after, bits, majority, prior):
        return None
    points, tolerance = ERASURE_TOLERANCE
    return after.mean <= majority.mean + points and bits.mean >= prior.mean - tolerance


def _erasure_row(block: Block, layer: int) -> tuple[list[str], dict[str, Any]]:
    found = {w: cell(block, f"layer_{layer}_{w}") for w in ERASURE_KEYS}
    majority, prior = once(block, "majority"), once(block, "prior_bits")
    classes = {int(k) for r in block.runs if (k := r.record.data.get("num_classes"))}
    expected = f" of {min(classes) - 1}" if len(classes) == 1 else ""
    holds = guard_holds(found, majority, prior)
    rank = found["rank"]
    cells = [block.encoder, block.weights, block.tags, f"layer_{layer}",
             MISSING if rank is None else f"{fmt(rank.mean, 0)}{expected}",
             fmt_stat(found["accuracy_before"]), fmt_stat(found["accuracy_after"]), fmt_stat(majority),
             fmt_stat(found["bits_before"], 3), fmt_stat(found["bits_after"], 4), fmt_stat(prior, 4),
             MISSING if holds is None else ("yes" if holds else "no")]
    record = {"encoder": block.encoder, "weights": block.weights, "tags": block.tags, "layer": layer,
              "relative_depth": block.depth(layer), "classes": sorted(classes), "holds": holds,
              "test": {**{w: stat_json(v) for w, v in found.items()}, "majority": stat_json(majority),
                       "prior_bits": stat_json(prior)}}
    return cells, record


def erasure_table(runs: Sequence[Run]) -> Table:
    """Rows: encoder × weights × labels × layer; the linear probe before and after LEACE beside the constant
    predictor (majority share, prior's bits) and the eraser's rank."""
    mine = [r for r in runs if r.task == ERASURE]
    header = ["Encoder", "Weights", "Labels", "Layer", "rank (of k − 1)", "acc. before %", "acc. after %",
              "majority %", "bits before", "bits after", "prior bits", "paper's direction holds"]
    rows, records = [], []
    for block in blocks(mine):
        for layer in erasure_layers(block):
            cells, record = _erasure_row(block, layer)
            rows.append(cells)
            records.append(record)
    points, tolerance = ERASURE_TOLERANCE
    notes = [
        "LEACE (Belrose et al. 2023, the concept-erasure package) fitted per layer on the training split's features "
        "and one-hot labels; a converged linear probe (fixed L2) fitted on the erased training features and scored "
        "on the erased test features (accuracy %, bits per token), before and after; majority = the training-"
        "majority class's test share, prior bits = the test labels' cross-entropy under the training prior; rank = "
        "the rank of the change x ↦ eraser(x) − x (k − 1 for k training classes).",
        PAPER_ERASURE + f". Ours is measured on held-out test: it holds when accuracy after is at most the majority "
        f"share + {points} points and bits after at least the prior's − {tolerance}.",
    ]
    extra = {"paper": {"source": "Belrose, Schneider-Joseph, Ravfogel, Cotterell, Raff & Biderman 2023 (LEACE)",
                       "data": "a guarantee on the fitting data (any encoder, any concept)",
                       "direction": "after erasure no linear classifier beats the constant predictor"},
             "tolerance": {"accuracy_points": points, "bits": tolerance}}
    return Table("Concept erasure (LEACE) per encoder, labels and layer", header, rows, notes, key="erasure",
                 records=records, extra=extra)


def render(given: SectionInput) -> Rendered:
    if not any(r.task == given.record_task for r in given.runs):
        return Rendered()
    return Rendered([erasure_table(given.runs)])


SECTION = Section(key="bits_beyond_baseline", order=3, render=render)
