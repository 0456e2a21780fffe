"""Probe conditional's part of the report, declared by config.py (``report``): the "bits beyond a baseline" section
(issue 47): per encoder (trained and random-weights twins as separate row blocks), label set and layer, what
``probe=conditional`` records (``conditional_probe``: H_V(Y | B), H_V(Y | B, ℓ), the gain and its interval per
baseline B, per probe family) beside the published direction, marked as the paper's and on which data, and its depth
figure. Probe erasure's records share the section (its key; the table is in erasure's report.py).

The section takes those records out of every older table, so a report over runs without them renders exactly as
before.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.report import figures
from elmo_bench.report.collect import Run
from elmo_bench.report.figures import _figure_legend, _panel_grid
from elmo_bench.report.probe_blocks import Block, blocks, cell, interval, once
from elmo_bench.report.sections import Rendered, Section, SectionInput, StepValue
from elmo_bench.report.table import Stat, Table, fmt_stat, stat_json

CONDITIONAL = "conditional_probe"
#: a conditional record's gain key: ``[family:]baseline/layer_<k>_gain`` (no family: the linear one)
GAIN = re.compile(r"(?:(?P<family>[a-z0-9]+):)?(?P<baseline>[a-z0-9]+)/layer_(?P<layer>\d+)_gain")
BASELINES = ("none", "layer0", "word", "random")
FAMILIES = {"linear": "linear (converged)", "mlp1": "MLP-1"}
ROW_KEYS = ("h_baseline", "h_joint", "gain", "gain_lo", "gain_hi", "accuracy")
PAPER_CONDITIONAL = ("paper: Hewitt, Ethayarajh, Liang & Manning 2021, the public 5.5B ELMo on OntoNotes 5 (English) "
                     "UPOS, linear probe: conditioned on layer 0, part of speech is found in deeper layers than plain "
                     "probing says")


def measured(runs: Sequence[Run]) -> tuple[list[str], list[str], list[int]]:
    """(families, baselines, layers) that the conditional records hold, in display order."""
    found = [m for r in runs for k in (r.metrics.get("test") or {}) if (m := GAIN.fullmatch(k))]
    families = {m.group("family") or "linear" for m in found}
    baselines = {m.group("baseline") for m in found}
    return ([f for f in FAMILIES if f in families] + sorted(families - set(FAMILIES)),
            [b for b in BASELINES if b in baselines] + sorted(baselines - set(BASELINES)),
            sorted({int(m.group("layer")) for m in found}))


def key_of(family: str, baseline: str, layer: int, what: str) -> str:
    """The record's flat key: ``b/layer_<k>_<what>``, ``mlp1:b/...`` for MLP-1."""
    return f"{'' if family == 'linear' else family + ':'}{baseline}/layer_{layer}_{what}"


def family_prior(block: Block, family: str) -> Stat | None:
    """H(Y) from the block's records that measured ``family`` (a record of another family, run separately, holds
    the same prior but is not this row's measurement)."""
    def has(run: Run) -> bool:
        return any((m := GAIN.fullmatch(k)) and (m.group("family") or "linear") == family
                   for k in (run.metrics.get("test") or {}))

    return once(replace(block, runs=[r for r in block.runs if has(r)]), "h_constant")


def _conditional_row(block: Block, family: str, layer: int, baselines: Sequence[str]
                     ) -> tuple[list[str], dict[str, Any]] | None:
    """One layer of one block and family: its Markdown cells and report.json record; None when nothing is measured."""
    prior = family_prior(block, family)
    cells = [block.encoder, block.weights, block.tags, FAMILIES.get(family, family), f"layer_{layer}",
             fmt_stat(prior, 3)]
    record: dict[str, Any] = {"encoder": block.encoder, "weights": block.weights, "tags": block.tags,
                              "probe": family, "layer": layer, "relative_depth": block.depth(layer),
                              "test": {"h_constant": stat_json(prior)}}
    any_found = False
    for b in baselines:
        found = {w: cell(block, key_of(family, b, layer, w)) for w in ROW_KEYS}
        any_found = any_found or found["gain"] is not None
        cells += [fmt_stat(found["h_baseline"], 3), fmt_stat(found["h_joint"], 3), fmt_stat(found["gain"], 3),
                  interval(found["gain_lo"], found["gain_hi"])]
        record["test"][b] = {w: stat_json(v) for w, v in found.items()}
    return (cells, record) if any_found else None


def deepest_gain(block: Block, family: str, baseline: str, layers: Sequence[int]) -> int | None:
    """The layer with the largest mean gain beyond ``baseline`` (None when the block has no such gain)."""
    found = {k: s.mean for k in layers if (s := cell(block, key_of(family, baseline, k, "gain"))) is not None}
    return max(found, key=lambda k: (found[k], -k)) if found else None


def ties(block: Block, family: str, baseline: str, layers: Sequence[int], best: int) -> list[int]:
    """The layers whose gain interval overlaps the best layer's: not told apart from it on this test set."""
    def ends(k: int) -> tuple[float, float] | None:
        low, high = (cell(block, key_of(family, baseline, k, w)) for w in ("gain_lo", "gain_hi"))
        return None if low is None or high is None else (low.mean, high.mean)

    top = ends(best)
    return [] if top is None else [k for k in layers if k != best and (e := ends(k)) is not None
                                   and e[1] >= top[0] and e[0] <= top[1]]


def conditional_direction(block: Block, family: str, layers: Sequence[int]) -> dict[str, Any] | None:
    """Ours beside the paper's direction: the layer with most bits without a baseline (plain probing) and beyond
    layer 0 (layer 0 itself left out: conditioned on itself it adds ≈ 0), each with the layers whose interval
    overlaps its own; "holds" when the second is deeper and neither is tied, None when either is tied."""
    plain = deepest_gain(block, family, "none", layers)
    above = [k for k in layers if k > 0]
    beyond = deepest_gain(block, family, "layer0", above)
    if plain is None or beyond is None:
        return None
    tied = {"plain": ties(block, family, "none", layers, plain), "beyond": ties(block, family, "layer0", above, beyond)}
    verdict = "deeper" if beyond > plain else "the same layer" if beyond == plain else "shallower"
    holds = None if tied["plain"] or tied["beyond"] else beyond > plain     # None: the intervals do not decide
    said = {True: "as the paper's direction", False: "not as the paper's direction",
            None: "the intervals do not separate the layers: neither as nor against the paper's direction"}[holds]

    def named(layer: int, others: list[int]) -> str:
        return f"layer_{layer}" + (f" (tied within the intervals with {', '.join(f'layer_{k}' for k in others)})"
                                   if others else "")

    return {"encoder": block.encoder, "weights": block.weights, "tags": block.tags, "probe": family,
            "plain_best_layer": plain, "beyond_layer0_best_layer": beyond, "holds": holds,
            "plain_tied_layers": tied["plain"], "beyond_layer0_tied_layers": tied["beyond"],
            "text": f"ours, {block.encoder}, {block.weights}, {block.tags}, {FAMILIES.get(family, family)}: most bits "
                    f"at {named(plain, tied['plain'])} without a baseline, at {named(beyond, tied['beyond'])} beyond "
                    f"layer 0: {verdict} ({said})"}


#: the method's own check (Hewitt et al. 2021): the first layer conditioned on itself adds nothing, within this
SELF_CHECK_BITS = 0.01


def self_check(block: Block, family: str, layers: Sequence[int]) -> dict[str, Any] | None:
    """The first layer beyond itself (baseline layer0): its gain and interval and whether |gain| <= SELF_CHECK_BITS;
    None when not measured. A failure says this family's gains for this block are not to be read at face value: on
    the wider input [b; ℓ] the probe fit the training split better and the test worse (docs/bits-and-erasure.md)."""
    first = min(layers, default=None)
    gain = None if first is None else cell(block, key_of(family, "layer0", first, "gain"))
    if gain is None:
        return None
    low, high = (cell(block, key_of(family, "layer0", first, w)) for w in ("gain_lo", "gain_hi"))
    holds = abs(gain.mean) <= SELF_CHECK_BITS
    text = (f"check failed: {block.encoder}, {block.weights}, {block.tags}, {FAMILIES.get(family, family)}: "
            f"layer_{first} conditioned on itself gains {gain.mean:+.3f} bits (interval {interval(low, high)}), "
            f"outside ±{SELF_CHECK_BITS}, the method's own check: this family's gains for this encoder are not to be "
            f"read at face value at this training size (the probe on the wider input [b; ℓ] fits the training "
            f"split better and the test worse; docs/bits-and-erasure.md)")
    return {"encoder": block.encoder, "weights": block.weights, "tags": block.tags, "probe": family,
            "layer": first, "gain": gain.mean, "holds": holds, "text": None if holds else text}


def _conditional_notes(runs: Sequence[Run], directions: list[dict[str, Any]]) -> list[str]:
    sentences = sorted({int(n) for r in runs if (n := r.record.data.get("train_sentences"))})
    return [
        "Conditional probing (Hewitt et al. 2021), test split, bits per token: H(Y) the test labels' cross-entropy "
        "under the training label prior; per baseline b, H(Y|b) the probe on b alone, H(Y|b,ℓ) the probe on [b; "
        "layer ℓ], gain = H(Y|b) − H(Y|b,ℓ) with its paired bootstrap 95% interval over test sentences (means over "
        "runs where several). b: none = the prior (the gain is plain probing's information), layer0 = the "
        "encoder's first layer, word = the word type as a learned lookup, random = the same layer of the "
        "random_init=all twin. Probes: linear = the converged softmax probe at one fixed L2; MLP-1 = the control-"
        "task regimen's (Adam, early stopping on dev).",
        "Ours: UD English-EWT, " + (f"{', '.join(map(str, sentences))} training sentences" if sentences
                                    else "training sentences as recorded") + ".",
        PAPER_CONDITIONAL + " (not our biLM nor our data: the direction, not the numbers, is compared).",
        *[d["text"] for d in directions]]


def conditional_table(runs: Sequence[Run]) -> Table:
    """Rows: encoder × weights × labels × probe family × layer; columns per baseline: H(Y|b), H(Y|b,ℓ), gain,
    interval."""
    mine = [r for r in runs if r.task == CONDITIONAL]
    families, baselines, layers = measured(mine)
    header = ["Encoder", "Weights", "Labels", "Probe", "Layer", "H(Y)"]
    for b in baselines:
        header += [f"H(Y|{b})", f"H(Y|{b},ℓ)", f"gain over {b}", f"95% interval ({b})"]
    rows, records, directions, checks = [], [], [], []
    for block in blocks(mine):
        for family in families:
            for layer in layers:
                found = _conditional_row(block, family, layer, baselines)
                if found is not None:
                    rows.append(found[0])
                    records.append(found[1])
            if (direction := conditional_direction(block, family, layers)) is not None:
                directions.append(direction)
            if (check := self_check(block, family, layers)) is not None:
                checks.append(check)
    extra = {"paper": {"source": "Hewitt, Ethayarajh, Liang & Manning 2021", "encoder": "the public 5.5B ELMo",
                       "data": "OntoNotes 5 (English), UPOS", "probe": "linear",
                       "direction": "conditioned on layer 0, part of speech is found in deeper layers than plain "
                                    "probing says"},
             "directions": directions}
    if any(not c["holds"] for c in checks):          # a new key only where the method's own check fails
        extra["self_checks"] = checks
    notes = _conditional_notes(mine, directions) + [c["text"] for c in checks if not c["holds"]]
    return Table("Bits beyond a baseline (conditional probing) per encoder, labels and layer", header, rows,
                 notes, key="bits_beyond_baseline", records=records, extra=extra)


def depth_series(runs: Sequence[Run]) -> dict[tuple[str, str], list[tuple[Block, str, list[tuple[float, float]]]]]:
    """{(labels, family): [(block, baseline, [(relative depth, mean gain)])]}: the figure's panels and lines."""
    mine = [r for r in runs if r.task == CONDITIONAL]
    families, baselines, layers = measured(mine)
    out: dict[tuple[str, str], list] = {}
    for block in blocks(mine):
        for family in families:
            for b in baselines:
                points = [(block.depth(k), s.mean) for k in layers
                          if (s := cell(block, key_of(family, b, k, "gain"))) is not None]
                if points:
                    out.setdefault((block.tags, family), []).append((block, b, points))
    return out


#: a marker per baseline in the bits-beyond-a-baseline figure
BASELINE_MARKERS = {"none": "o", "layer0": "s", "word": "^", "random": "D"}


def _weights_style(block: Any, seen: dict[str, str]) -> str:
    """Trained solid, a random-weights twin dashed (a second trained or random label: dotted / dash-dot)."""
    if block.weights not in seen:
        pool = ("-", ":") if block.trained else ("--", "-.")
        alike = sum(1 for label in seen if label.startswith("trained") == block.trained)
        seen[block.weights] = pool[alike % 2]
    return seen[block.weights]


def bits_depth_figure(runs: Sequence[Run], path: Path) -> bool:
    """The gain beyond each baseline (bits per token, test) against relative layer depth, a panel per labels and
    probe family: a colour per encoder, a marker per baseline, trained solid and random-weights twins dashed; a
    grey line at 0 bits. False (nothing written) without conditional-probing runs."""
    panels = depth_series(runs)
    if not panels:
        return False
    fig, axes = _panel_grid(len(panels), 2, (5.2, 3.8))
    colours: dict[str, str] = {}
    styles: dict[str, str] = {}
    for ax, ((tags, family), series) in zip(axes.flat, panels.items()):
        for block, baseline, points in series:
            colour = colours.setdefault(block.encoder, f"C{len(colours)}")
            ax.plot([x for x, _ in points], [y for _, y in points], color=colour, markersize=4,
                    linestyle=_weights_style(block, styles), marker=BASELINE_MARKERS.get(baseline, "x"),
                    label=f"{block.encoder}, {block.weights}, "
                          + ("no baseline (plain probing)" if baseline == "none" else f"beyond {baseline}"))
        ax.axhline(0.0, color="gray", linewidth=0.8)
        ax.set_xlim(-0.05, 1.05)
        ax.set_xlabel("relative layer depth")
        ax.set_ylabel("gain (bits per token, test)")
        ax.set_title(f"{tags}, {FAMILIES.get(family, family)} probe", fontsize="small")
        ax.grid(True, alpha=0.3)
    _figure_legend(fig, axes, len(panels))
    figures._save(fig, path)   # through the module: a test may catch the figure there
    return True


FIGURE = "bits_beyond_baseline_depth.png"


def render(given: SectionInput) -> Rendered:
    if not any(r.task == given.record_task for r in given.runs):
        return Rendered()
    drawn = bits_depth_figure(given.runs, given.out / FIGURE)
    return Rendered([conditional_table(given.runs)], {FIGURE: drawn},
                    {"bits_beyond_baseline": (FIGURE, "Bits beyond a baseline by relative layer depth", "")})


def by_step(run: Run) -> list[StepValue]:
    """Each layer's bits beyond layer 0 with its interval (test), per probe family, for the "by training step"
    section (a series point's record)."""
    out = []
    for key in sorted(run.metrics.get("test") or {}):
        found = GAIN.fullmatch(key) if run.task == CONDITIONAL else None
        value = None if found is None or found["baseline"] != "layer0" else run.value("test", key)
        if found is not None and value is not None:
            family = FAMILIES.get(found["family"] or "linear", found["family"])
            out.append(StepValue(f"bits beyond layer 0, {family} probe (test)", int(found["layer"]), value,
                                 run.value("test", key + "_lo"), run.value("test", key + "_hi")))
    return out


SECTION = Section(key="bits_beyond_baseline", order=3, render=render,
                  summary="Conditional-probing and erasure runs", by_step=by_step)
