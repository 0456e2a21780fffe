"""The report's probe-control section (issue 36): accuracy, control accuracy and selectivity per layer, probe type
and encoder, trained vs random weights; the best layer with its p-value; Hewitt & Liang's published numbers beside.

It reads the ``pos_probe`` records ``elmo-bench probe-pos`` writes with ``--control`` or the papers' probes (they
carry a ``probing`` block). Those records are kept out of every older table and figure (``split_runs``), so a report
over runs without them renders exactly as before.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.report import figures
from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import BILM, CHECKPOINT, base_label, depth_span, layer_numbers, recorded_label
from elmo_bench.report.experiments import apart
from elmo_bench.report.figures import SeriesStyles, _figure_legend, plt
from elmo_bench.report.probe_common import PROBE_NAMES
from elmo_bench.report.probe_settings import probe_settings
from elmo_bench.report.sections import Rendered, Section, SectionInput, StepValue
from elmo_bench.report.table import MISSING, Stat, Table, fmt, fmt_stat, stat

#: Hewitt & Liang (2019), ELMo (the public 5.5B model) layer 1, PTB WSJ dev, 40,000 training sentences: accuracy,
#: control accuracy, selectivity (the authors' run logs in control-tasks scripts/codalab/make_emnlp19_pos_graph.py)
PAPER_LAYER1_DEV = {"linear": (97.2, 71.7, 25.5), "mlp1": (97.4, 92.8, 4.7), "mlp2": (97.4, 92.1, 5.3)}
RANDOM_KEYS = ("random_init", "random_seed")
ROW = re.compile(r"layer_(\d+)|average")


def is_control_run(run: Run) -> bool:
    return run.task == "pos_probe" and isinstance(run.record.extra.get("probing"), dict)


def encoder_label(run: Run) -> str:
    ident = {k: v for k, v in (run.record.encoder or {}).items() if k not in (*RANDOM_KEYS, "layers", "dim", CHECKPOINT)}
    if ident.get("kind", BILM) == BILM:
        ident = {"kind": BILM, "hash": str((run.record.bilm or {}).get("trained_hash")
                                             or (run.record.bilm or {}).get("hash") or ident.get("hash", "")
                                             ).partition("-random-")[0]}   # the weights column says random
    return base_label(ident, recorded_label(run.record))


def train_size(run: Run) -> int | None:
    return run.record.data.get("train_sentences")


def weights_label(run: Run, plain_size: int | None = None) -> str:
    """"trained" or "random (<mode>, seed <s>)", plus ", seeds a,b,c" for a run of several probe seeds (its own
    row block, mean ± sd over its seeds)."""
    random = run.record.extra.get("random_init")
    label = "trained" if not random else f"random ({random.get('mode')}, seed {random.get('seed')})"
    seeds = run.record.extra["probing"].get("seeds", [])
    sentences = train_size(run)
    budget = f", {sentences} train sentences" if sentences and plain_size and sentences != plain_size else ""
    return label + budget + (f", seeds {','.join(map(str, seeds))}" if len(seeds) > 1 else "")


def probe_kinds(runs: Sequence[Run]) -> list[str]:
    found = {p for r in runs for p in r.record.extra["probing"].get("probes", [])}
    return [p for p in PROBE_NAMES if p in found]


def _key(run: Run, probe: str, row: str) -> str | None:
    probes = run.record.extra["probing"].get("probes", [])
    if probe not in probes:
        return None
    return row if probes == ["converged"] else f"{probe}/{row}"


def _value(run: Run, what: str, split: str, key: str) -> float | None:
    if what == "accuracy":
        return (run.metrics.get(split) or {}).get(f"{key}_accuracy")
    return ((run.record.extra.get(what) or {}).get(split) or {}).get(key)


def cell(runs: Sequence[Run], what: str, split: str, probe: str, row: str) -> Stat | None:
    """Mean ± sd: over the runs, or (one run) over the seeds it recorded."""
    values = [_value(r, what, split, k) for r in runs if (k := _key(r, probe, row))]
    found = stat(values)
    if found is not None and len(runs) == 1 and (k := _key(runs[0], probe, row)):
        spread = (((runs[0].record.extra.get("sd") or {}).get(what) or {}).get(split) or {}).get(k)
        seeds = len(runs[0].record.extra["probing"].get("seeds", []))
        return Stat(found.mean, spread, seeds) if spread is not None else found
    return found


def budget(run: Run) -> tuple[int, int]:
    """The training budget of a record's probes (epoch cap, hidden units; 0 where unset): two budgets give two
    numbers, never two seeds of one."""
    config = probe_settings(run.record)
    return tuple(int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0
                 for v in (config.get("max_epochs"), config.get("hidden")))


def _by_budget(members: Sequence[Run]) -> dict[str, list[Run]]:
    """One block's records split where a probe was trained with two budgets (issue 45: they were averaged): per
    record, the rank of its budget among its probes' budgets; records of one rank stay one block ("" when there is
    only one, else labelled with its budgets, ", E epochs, hidden H")."""
    seen: dict[str, set[tuple[int, int]]] = {}
    for run in members:
        for probe in run.record.extra["probing"].get("probes", []):
            seen.setdefault(probe, set()).add(budget(run))
    ranks = [max((sorted(seen[p]).index(budget(r)) for p in r.record.extra["probing"].get("probes", [])), default=0)
             for r in members]
    if max(ranks, default=0) == 0:
        return {"": list(members)}
    blocks: dict[int, list[Run]] = {}
    for run, rank in zip(members, ranks):
        blocks.setdefault(rank, []).append(run)
    return {", " + "; ".join(f"{e or '?'} epochs, hidden {h or '?'}" for e, h in sorted({budget(r) for r in part})):
            part for _, part in sorted(blocks.items())}


#: the identity keys of a probe's training budget (_by_budget sets those apart), in both record formats
BUDGET_KEYS = ("probe.max_epochs", "probe.hidden", "max_epochs", "hidden")


def _probes(run: Run) -> tuple[str, ...]:
    """The probes a record trained (its columns): records of other probes are never seeds of one another."""
    return tuple(run.record.extra["probing"].get("probes", []))


def groups(runs: Sequence[Run]) -> list[tuple[tuple[str, str], list[Run]]]:
    """Runs by (encoder, weights): biLMs first, trained before random. Runs of one encoder on different training-set
    sizes are never averaged: the smallest size keeps the plain label, each other size is its own block labelled
    with it."""
    smallest: dict[str, int] = {}
    for run in runs:
        if train_size(run):
            smallest[encoder_label(run)] = min(train_size(run), smallest.get(encoder_label(run), train_size(run)))
    out: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        label = encoder_label(run)
        out.setdefault((label, weights_label(run, smallest.get(label))), []).append(run)
    out = {(label, weights + suffix + (f", {apart_by}" if apart_by else "")): apart_part
           for (label, weights), members in out.items() for suffix, part in _by_budget(members).items()
           for apart_by, apart_part in apart(part, _probes, BUDGET_KEYS)}
    return sorted(out.items(), key=lambda kv: (not kv[0][0].startswith("ELMo"), kv[0][0], not kv[0][1].startswith("trained"),
                                              kv[0][1]))


def _rows(runs: Sequence[Run]) -> list[str]:
    found = {k.split("/")[-1][: -len("_accuracy")] for r in runs for k in (r.metrics.get("dev") or {})}
    layers = sorted((int(m.group(1)) for k in found if (m := ROW.fullmatch(k)) and m.group(1)))
    return [f"layer_{k}" for k in layers] + (["average"] if "average" in found else [])


def _paper_rows(probes: Sequence[str]) -> list[list[str]]:
    cells = []
    for probe in probes:
        paper = PAPER_LAYER1_DEV.get(probe)
        cells += [fmt(v, 1) for v in paper] if paper else [MISSING] * 3
    return [["paper: ELMo (public 5.5B biLM), Hewitt & Liang 2019", "trained", "dev (PTB WSJ)", "layer_1", *cells]]


def control_probe_kinds(runs: Sequence[Run]) -> list[str]:
    """The probe kinds of the table: each kind some run trained with ``--control``; the converged probe only then
    (a random encoder's plain converged run, e.g. probe-suite's ``pos``, has no control: its accuracies are in the
    best-layer table)."""
    controlled = {p for r in runs if r.record.extra.get("control")
                  for p in r.record.extra["probing"].get("probes", [])}
    return [p for p in probe_kinds(runs) if p != "converged" or p in controlled]


def probe_control_table(runs: Sequence[Run]) -> Table:
    """Rows: encoder × weights × split × layer (and average); per probe: accuracy, control accuracy, selectivity."""
    probes = control_probe_kinds(runs)
    header = ["Encoder", "Weights", "Split", "Row"] + [f"{PROBE_NAMES[p]} {c}" for p in probes
                                                       for c in ("accuracy", "control", "selectivity")]
    rows, records = [], []
    for (encoder, weights), members in groups(runs):
        for split in ("dev", "test"):
            for row in _rows(members):
                cells = {(p, w): cell(members, w, split, p, row) for p in probes
                         for w in ("accuracy", "control", "selectivity")}
                rows.append([encoder, weights, split, row, *[fmt_stat(cells[(p, w)]) for p in probes
                                                             for w in ("accuracy", "control", "selectivity")]])
                records.append({"encoder": encoder, "weights": weights, "split": split, "row": row,
                                **{f"{p}_{w}": None if c is None else {"mean": c.mean, "std": c.std, "n": c.n}
                                   for (p, w), c in cells.items()}})
    rows += _paper_rows(probes)
    sentences = sorted({r.record.data.get("train_sentences") for r in runs if r.record.data.get("train_sentences")})
    notes = ["POS probes with control tasks (Hewitt & Liang 2019): control = accuracy on the control task (every word "
             "type gets one random label drawn from the training tag distribution), selectivity = accuracy − "
             "control, in points; mean ± sd over the seeds the run recorded (control labels and probe initialisation).",
             "Ours: UD English-EWT (PTB tags from XPOS), " + (f"{', '.join(map(str, sentences))} training sentences"
                                                             if sentences else "training sentences as recorded")
             + "; random weights = the same architecture drawn by its initialiser (biLM `all`: every weight; `lstm`: "
             "trained token layer, random LSTMs; transformers: the model built from its config).",
             "Paper: the public ELMo (not our biLM), layer 1 = its first biLSTM layer (ours: layer_1), PTB WSJ dev, "
             "40,000 training sentences; its linear probe is rank-1000 linear, MLP-1/MLP-2 have 1000 hidden units."]
    if "converged" in probes:
        notes.append("The converged columns (ours only) are the L-BFGS probe of Table 6, its control fitted with the "
                     "L2 chosen on the real task.")
    return Table("POS probes with control tasks: accuracy, control, selectivity", header, rows, notes,
                 key="probe_controls", records=records,
                 extra={"paper": {p: dict(zip(("accuracy", "control", "selectivity"), v))
                                  for p, v in PAPER_LAYER1_DEV.items()}})


def best_layer_table(runs: Sequence[Run]) -> Table:
    """Per encoder × weights × probe: the best layer on test, the runner-up, difference and bootstrap p-value."""
    rows, records = [], []
    for (encoder, weights), members in groups(runs):
        for run in members:
            for probe, best in (run.record.extra.get("best_layer") or {}).items():
                cells = [encoder, weights, PROBE_NAMES.get(probe, probe), best["split"], best["best"],
                         best["runner_up"], fmt(best["best_accuracy"]), fmt(best["runner_up_accuracy"]),
                         fmt(best["difference"]), fmt(best["p_value"], 4)]
                rows.append(cells)
                records.append({"encoder": encoder, "weights": weights, "probe": probe, **best})
    notes = ["Best layer on the test split and the runner-up; p = one-sided paired bootstrap over test sentences "
             "(1,000 resamples, Berg-Kirkpatrick et al. 2012): the share of resampled accuracy differences at least "
             "twice the observed one. Only the layers a run probed compete (``--rows``); the average row never does."]
    return Table("Which layer, and how sure", ["Encoder", "Weights", "Probe", "Split", "Best", "Runner-up",
                                               "Best acc.", "Runner-up acc.", "Difference", "p"], rows, notes,
                 key="probe_best_layer", records=records)


def _span(run: Run) -> int:
    """L + 1 of relative depth from the run's encoder record (encoder_names.depth_span: its layer count, or for an
    encoder that kept some of a model's layers the model's last layer number + 1); 0 unrecorded."""
    return depth_span(run.record) or 0


def _layer_points(members: Sequence[Run], probe: str, what: str, split: str) -> list[tuple[int, float, float]]:
    """[(layer, relative depth, value)] of one block, in layer order."""
    layers = [int(r[len("layer_"):]) for r in _rows(members) if r.startswith("layer_")]
    total = max(_span(r) for r in members) or (max(layers, default=0) + 1)
    return [(k, k / (total - 1) if total > 1 else 0.0, c.mean) for k in layers
            if (c := cell(members, what, split, probe, f"layer_{k}")) is not None]


def depth_points(runs: Sequence[Run], probe: str, what: str, split: str = "test"
                 ) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """{(encoder, weights): [(relative depth, value)]} of one probe and quantity (accuracy or selectivity)."""
    out = {}
    for (encoder, weights), members in groups(runs):
        points = _layer_points(members, probe, what, split)
        if points:
            out[(encoder, weights)] = [(x, y) for _, x, y in points]
    return out


def depth_segments(runs: Sequence[Run], probe: str, what: str, split: str = "test"
                   ) -> dict[tuple[str, str], list[list[tuple[float, float]]]]:
    """:func:`depth_points` cut where the encoder has a layer the probe did not score (issue 56: layers 0 and 6 of
    MiniLM were joined by a line across five layers never probed): each piece is drawn as a line, a piece of one
    point as a marker."""
    out = {}
    for (encoder, weights), members in groups(runs):
        points = _layer_points(members, probe, what, split)
        if not points:
            continue
        own = sorted({k for r in members for k in (layer_numbers(r.record) or [])})
        pieces: list[list[tuple[float, float]]] = [[]]
        for (before, _, _), (k, x, y) in zip([points[0], *points], points):
            if any(before < layer < k for layer in own):
                pieces.append([])
            pieces[-1].append((x, y))
        out[(encoder, weights)] = pieces
    return out


#: markers of a probe whose points are single layers (drawn in a neighbour's panel, issue 56)
SPARSE_MARKERS = (("*", "stars"), ("h", "hexagons"), ("p", "pentagons"), ("X", "crosses"))


def selectivity_panels(runs: Sequence[Run]) -> dict[str, list[str]]:
    """{panel's probe: the probes drawn in it}: a probe whose every series is single, unjoined points (MLP-2 at
    layer 1 only) joins the panel of the probe before it (else the first) instead of a panel with one dot."""
    probes = [p for p in probe_kinds(runs) if depth_points(runs, p, "selectivity")]
    dense = [p for p in probes if any(len(piece) > 1 for pieces in depth_segments(runs, p, "accuracy").values()
                                      for piece in pieces)]
    panels: dict[str, list[str]] = {}
    for probe in probes:
        before = [d for d in dense if probes.index(d) < probes.index(probe)]
        host = probe if probe in dense or not dense else (before or dense)[-1 if before else 0]
        panels.setdefault(host, []).append(probe)
    return panels


def _selectivity_title(what: str, probes: Sequence[str]) -> str:
    extra = [f"{PROBE_NAMES[p]} probe ({SPARSE_MARKERS[i % 4][1]})" for i, p in enumerate(probes[1:])]
    lines = " (lines)" if extra else ""
    return f"POS {what}: {PROBE_NAMES[probes[0]]} probe{lines}" + "".join(f", {e}" for e in extra)


def _selectivity_panel(ax: Any, runs: Sequence[Run], probes: Sequence[str], what: str, colours: dict[str, str],
                       styles: "SeriesStyles") -> None:
    """One quantity of one panel's probes: the first probe's series as lines cut at unprobed layers (a piece of one
    point is a marker), each merged probe's points as big markers of their own."""
    for i, probe in enumerate(probes):
        for (encoder, weights), pieces in depth_segments(runs, probe, what).items():
            colour = colours.setdefault(encoder, f"C{len(colours)}")
            style = styles.of(weights) if i == 0 else {"linestyle": "none", "marker": SPARSE_MARKERS[(i - 1) % 4][0]}
            label = f"{encoder}, {weights}" + ("" if i == 0 else f", {PROBE_NAMES[probe]} probe")
            for n, piece in enumerate(pieces):
                ax.plot([x for x, _ in piece], [y for _, y in piece], markersize=4 if i == 0 else 10, color=colour,
                        **style, label=label if n == 0 else "_nolegend_")
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel("relative layer depth")
    ax.set_ylabel(f"test {what} (points)")
    ax.set_title(_selectivity_title(what, probes), fontsize="small")
    ax.grid(True, alpha=0.3)


def probe_selectivity_figure(runs: Sequence[Run], path: Path) -> bool:
    """The probe-depth figure for the control-task runs (this section's tables): per probe type, test
    accuracy and selectivity against relative layer depth, a colour per encoder, a line style per weights (trained
    solid, random dashed) and a marker per training size or seed set; one legend below the panels (issue 45: the
    panels' legends covered their lines, and runs of two sizes were drawn alike). Issue 56: no line across layers
    never probed, and a probe with single points only is drawn in its neighbour's panel. False (nothing written)
    without such runs."""
    panels = selectivity_panels(runs)
    if not panels:
        return False
    fig, axes = plt.subplots(2, len(panels), figsize=(4.8 * len(panels), 6.4), squeeze=False, layout="constrained")
    colours: dict[str, str] = {}
    styles = SeriesStyles()
    for col, probes in enumerate(panels.values()):
        for row, what in enumerate(("accuracy", "selectivity")):
            _selectivity_panel(axes[row][col], runs, probes, what, colours, styles)
    _figure_legend(fig, axes)
    figures._save(fig, path)   # through the module: a test may catch the figure there
    return True


FIGURE = "probe_selectivity.png"


def render(given: SectionInput) -> Rendered:
    drawn = probe_selectivity_figure(given.runs, given.out / FIGURE)
    return Rendered([probe_control_table(given.runs), best_layer_table(given.runs)], {FIGURE: drawn},
                    {"probe_controls": (FIGURE, "Probe accuracy and selectivity by relative layer depth", "")})


def by_step(run: Run) -> list[StepValue]:
    """Per probe and layer, test accuracy and (with the control task) selectivity, for the "by training step"
    section (a series point's record)."""
    layers = sorted({int(m.group(1)) for key in run.metrics.get("test") or {}
                     if (m := re.fullmatch(r"(?:[a-z0-9]+/)?layer_(\d+)_accuracy", key))})
    out = []
    for probe in probe_kinds([run]):
        for what in ("accuracy", "selectivity"):
            for layer in layers:
                key = _key(run, probe, f"layer_{layer}")
                value = _value(run, what, "test", key) if key else None
                if isinstance(value, (int, float)):
                    out.append(StepValue(f"POS {what}, {PROBE_NAMES.get(probe, probe)} probe (test)", layer,
                                         float(value)))
    return out


SECTION = Section(key="probe_controls", order=1, claims_own=False, take=is_control_run, render=render,
                  summary="Probe-control runs", by_step=by_step)
