"""The report's "bits beyond a baseline" and erasure sections (issue 47): per encoder (trained and random-weights twins
as separate row blocks), label set and layer, what ``probe=conditional`` records (``conditional_probe``: H_V(Y | B),
H_V(Y | B, ℓ), the gain and its interval per baseline B, per probe family) and what ``probe=erasure`` records
(``erasure_probe``: a linear probe's accuracy and bits before and after LEACE, the majority share, the prior's bits,
the eraser's rank), each beside the published direction, marked as the paper's and on which data.

Those records are kept out of every older table (``split_runs``), so a report over runs without them renders exactly
as before.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames, depth_span
from elmo_bench.report.experiments import apart
from elmo_bench.report.probe_common import Keyed, base_identity, train_sentences, weights_label
from elmo_bench.report.probe_settings import probe_settings
from elmo_bench.report.tables import MISSING, Stat, Table, fmt, fmt_stat, stat, stat_json

CONDITIONAL = "conditional_probe"
ERASURE = "erasure_probe"
#: a conditional record's gain key: ``[family:]baseline/layer_<k>_gain`` (no family: the linear one)
GAIN = re.compile(r"(?:(?P<family>[a-z0-9]+):)?(?P<baseline>[a-z0-9]+)/layer_(?P<layer>\d+)_gain")
BASELINES = ("none", "layer0", "word", "random")
FAMILIES = {"linear": "linear (converged)", "mlp1": "MLP-1"}
#: probe settings that choose what is measured, not how: records differing only in them are one block
SHARED_SETTINGS = ("baseline", "layers", "bootstrap", "data_dir", "probe", "tags", "max_train_sentences", "name")
#: the identity keys a block's columns and labels already set apart (which baselines, layers or families were
#: asked for, the labels, the training size): records differing only in them are one block
SHOWN = tuple(f"probe.{key}" for key in SHARED_SETTINGS)
ROW_KEYS = ("h_baseline", "h_joint", "gain", "gain_lo", "gain_hi", "accuracy")
ERASURE_KEYS = ("rank", "accuracy_before", "accuracy_after", "bits_before", "bits_after")
PAPER_CONDITIONAL = ("paper: Hewitt, Ethayarajh, Liang & Manning 2021, the public 5.5B ELMo on OntoNotes 5 (English) "
                     "UPOS, linear probe: conditioned on layer 0, part of speech is found in deeper layers than plain "
                     "probing says")
PAPER_ERASURE = ("paper: Belrose et al. 2023 (LEACE), a guarantee on the data the eraser is fitted on, for any "
                 "encoder and concept: after erasure no linear classifier beats the constant predictor")
#: the issue's completeness check: accuracy within this many points of the majority share, bits within this of the prior
ERASURE_TOLERANCE = (0.5, 0.02)


def split_runs(runs: Sequence[Run]) -> tuple[list[Run], list[Run]]:
    """(every other run, the conditional-probing and erasure runs)."""
    mine = (CONDITIONAL, ERASURE)
    return [r for r in runs if r.task not in mine], [r for r in runs if r.task in mine]


@dataclass
class Block:
    """One row block: an encoder, its weights (trained or a random twin), the labels and the training size."""

    encoder: str
    weights: str
    tags: str
    trained: bool
    runs: list[Run]

    @property
    def layer_count(self) -> int:
        """L + 1 of relative depth (encoder_names.depth_span): with encoder.layers a subset, its deepest + 1."""
        counts = [c for r in self.runs if (c := depth_span(r.record))]
        return max(counts) if counts else 1

    def depth(self, layer: int) -> float:
        return layer / (self.layer_count - 1) if self.layer_count > 1 else 0.0


def settings_of(run: Run) -> dict[str, Any]:
    """The probe settings that change a measurement (not which baselines, layers or families were asked for, nor
    the bootstrap's resamples): records that differ in them are never averaged as seeds (issue 45)."""
    return {k: v for k, v in sorted(probe_settings(run.record).items()) if k not in SHARED_SETTINGS}


def _settings_label(settings: dict[str, Any], varying: Sequence[str]) -> str:
    return "".join(f", {k}={settings.get(k)}" for k in varying)


def blocks(runs: Sequence[Run]) -> list[Block]:
    """Runs by (encoder, weights, labels, training size, settings): encoders in report order (biLMs first), trained
    before random; runs of one block are seeds (or baselines run separately) of one measurement, and a block whose
    settings differ from a neighbour's is labelled with them (``trained, max_epochs=40``)."""
    keyed = [Keyed(r.record, base_identity(r.record)) for r in runs]
    names = EncoderNames(keyed)
    found: dict[tuple, list[Run]] = {}
    for run, k in zip(runs, keyed):
        key = (k.encoder_key, weights_label(run.record), str(run.record.data.get("tags") or "upos"),
               train_sentences(run) or 0, json.dumps(settings_of(run), sort_keys=True, default=str))
        found.setdefault(key, []).append(run)
    several_sizes = len({key[3] for key in found}) > 1
    varying: dict[tuple, list[str]] = {}
    for key in found:
        alike = [json.loads(other[4]) for other in found if other[:4] == key[:4]]
        varying[key[:4]] = sorted({k for a in alike for b in alike for k in set(a) | set(b) if a.get(k) != b.get(k)})
    order = {key: i for i, key in enumerate(names.order)}
    ranked = sorted(found, key=lambda key: (order.get(key[0], len(order)), key[1] != "trained", *key[1:]))
    return [Block(names.label(key[0]), key[1] + (f", {key[3]} train sentences" if several_sizes and key[3] else "")
                  + _settings_label(json.loads(key[4]), varying[key[:4]]) + (f", {apart_by}" if apart_by else ""),
                  key[2], key[1] == "trained", part)
            for key in ranked for apart_by, part in apart(found[key], shown=SHOWN)]


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


def cell(block: Block, key: str) -> Stat | None:
    return stat(r.value("test", key) for r in block.runs)


def interval(low: Stat | None, high: Stat | None) -> str:
    """"lo to hi" (means over runs where several)."""
    return MISSING if low is None or high is None else f"{low.mean:.3f} to {high.mean:.3f}"


def once(block: Block, key: str) -> Stat | None:
    """A value every run of the block shares (the prior's bits, the majority share): one number, not ± 0."""
    values = [v for r in block.runs if (v := r.value("test", key)) is not None]
    return Stat(values[0], None, len(values)) if values and len(set(values)) == 1 else stat(values)


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
