"""The report's structural-probe and MDL section (issue 37): per encoder (trained and random-weights twins as separate
row blocks) and layer, the structural probes' UUAS, DSpr, root accuracy and NSpr (``structural_probe`` records, test
split) and the online codelength, compression and accuracy of each MDL probe, for the tags and for the control task
(``mdl_probe`` records: codes on train, accuracy on test), with Hewitt & Manning's (2019) Table 1 beside the biLM's
rows, marked as theirs.

It reads the records ``elmo-bench probe-structural`` and ``probe-mdl`` write (and ``probe-suite`` under
``OUT/structural``, ``OUT/mdl``, ``OUT/mdl_mlp``). Those records are kept out of every older table (``split_runs``),
so a report over runs without them renders exactly as before.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.report import figures
from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames, depth_span
from elmo_bench.report.experiments import apart
from elmo_bench.report.figures import SeriesStyles, _figure_legend, _panel_grid
from elmo_bench.report.probe_common import PROBE_NAMES, Keyed, base_identity, train_sentences, weights_label
from elmo_bench.report.probe_settings import probe_settings
from elmo_bench.report.sections import Rendered, Section, SectionInput, StepValue
from elmo_bench.report.table import MISSING, Stat, Table, fmt, fmt_stat, stat, stat_json

STRUCTURAL = "structural_probe"


def is_mdl(run: Run) -> bool:
    """An MDL record among this section's runs (its group: the structural probe's records and those of the probes
    that join its key: MDL's, whose report.py declares that key)."""
    return run.task != STRUCTURAL
#: (metric key, header, digits): the structural probes' test metrics
STRUCTURAL_METRICS = (("uuas", "UUAS", 2), ("dspr", "DSpr", 3), ("root_acc", "root %", 2), ("nspr", "NSpr", 3))
#: (metric key, split, header suffix, digits) of one MDL probe; the control task's are ``control_``-prefixed
MDL_METRICS = (("online_bits", "train", "bits (train)", 0), ("compression", "train", "compression (train)", 2),
               ("accuracy", "test", "acc. (test)", 2))
#: Hewitt & Manning (2019), Table 1: PTB WSJ test, the public 5.5B ELMo; (label, weights, UUAS, DSpr, root %, NSpr)
PAPER = {"ELMo0": ("layer_0 (ELMo0)", "trained", 26.8, 0.44, 54.3, 0.56),
         "ELMo1": ("layer_1 (ELMo1)", "trained", 77.0, 0.83, 86.5, 0.87),
         "Proj0": ("Proj0", "random BiLSTM over trained layer_0", 59.8, 0.73, 64.4, 0.75)}
PAPER_LINEAR_UUAS = 48.9
PAPER_LABEL = "paper: ELMo (public 5.5B biLM), Hewitt & Manning 2019, PTB WSJ test"
LAYER = re.compile(r"layer_(\d+)_(?:uuas|online_bits|accuracy)")


def mdl_probe(run: Run) -> str:
    """Which probe coded an MDL record: ``config.probe.probe`` (a probe run's settings, ``python run.py probe=mdl``),
    ``config.probe`` (the probe-mdl command's records before probe runs), else linear (records before ``--probe``)."""
    return str(probe_settings(run.record).get("probe") or "linear")


@dataclass
class Group:
    """One row block: an encoder, its weights (trained or a random twin) and one training budget; ``weights`` is the
    block's label (", N train sentences" and the epochs where those tell two blocks apart)."""

    encoder: str
    weights: str
    is_bilm: bool
    runs: list[Run]
    trained: bool = True

    @property
    def layers(self) -> list[int]:
        found = {int(m.group(1)) for r in self.runs for scores in r.metrics.values() for k in scores
                 if (m := LAYER.fullmatch(k))}
        return sorted(found)

    @property
    def layer_count(self) -> int:
        """L + 1 of relative depth (encoder_names.depth_span): with encoder.layers a subset, its deepest + 1."""
        counts = [c for r in self.runs if (c := depth_span(r.record))]
        return max(counts) if counts else max(self.layers, default=0) + 1


def probe_kind(run: Run) -> str:
    """What a record measured: the structural probes, or one MDL probe (its epochs mean nothing to another's)."""
    return "structural probes" if run.task == STRUCTURAL else f"MDL {PROBE_NAMES.get(mdl_probe(run), mdl_probe(run))}"


def epoch_budget(run: Run) -> int | None:
    """The record's epoch cap (``--max-epochs``): two caps give two numbers, never two seeds of one."""
    found = probe_settings(run.record).get("max_epochs")
    return int(found) if isinstance(found, (int, float)) and not isinstance(found, bool) else None


def _epoch_ranks(runs: Sequence[Run], keyed: Sequence[Keyed]) -> list[int]:
    """Per run, the position of its epoch cap among the caps of its probe kind within its encoder, weights and
    training size: records of equal rank share a row block (a structural probe's 10 epochs beside an MDL probe's
    40), records of one kind with two caps do not."""
    caps: dict[tuple, set] = {}
    for run, k in zip(runs, keyed):
        caps.setdefault((k.encoder_key, weights_label(run.record), train_sentences(run), probe_kind(run)),
                        set()).add(epoch_budget(run) or 0)
    return [sorted(caps[(k.encoder_key, weights_label(r.record), train_sentences(r), probe_kind(r))]).index(
        epoch_budget(r) or 0) for r, k in zip(runs, keyed)]


def _budget_label(members: Sequence[Run], several_sizes: bool, several_caps: bool) -> str:
    """", N train sentences" (when the table holds several sizes) and ", <kind> E epochs" (when one kind was run
    with several epoch caps): what sets a row block apart from its neighbours."""
    size = train_sentences(members[0])
    label = f", {size} train sentences" if several_sizes and size else ""
    if several_caps:
        caps = sorted({(probe_kind(r), epoch_budget(r)) for r in members}, key=str)
        label += ", " + "; ".join(f"{kind} {cap if cap else '?'} epochs" for kind, cap in caps)
    return label


def groups(runs: Sequence[Run]) -> list[Group]:
    """Runs by (encoder, weights, training size, epoch cap): encoders in report order (biLMs first), trained before
    random, smaller training sets first. Records of different training sizes or epoch caps are never averaged as
    if they were seeds (issue 45): each is its own row block, labelled with what sets it apart."""
    keyed = [Keyed(r.record, base_identity(r.record)) for r in runs]
    names = EncoderNames(keyed)
    ranks = _epoch_ranks(runs, keyed)
    found: dict[tuple, list[Run]] = {}
    for run, k, rank in zip(runs, keyed, ranks):
        key = (k.encoder_key, weights_label(run.record), train_sentences(run) or 0, rank)
        found.setdefault(key, []).append(run)
    several_sizes = len({key[2] for key in found}) > 1
    several_caps = {key[:3] for key in found if key[3] > 0}
    order = {key: i for i, key in enumerate(names.order)}
    out = [(key, Group(names.label(key[0]), key[1] + _budget_label(members, several_sizes, key[:3] in several_caps)
                       + (f", {apart_by}" if apart_by else ""), names.is_bilm(key[0]), part, key[1] == "trained"))
           for key, members in found.items() for apart_by, part in apart(members, probe_kind)]
    ranked = sorted(out, key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][1] != "trained",
                                         kv[0][1], kv[0][2], kv[0][3]))
    return [group for _, group in ranked]


def mdl_probes(runs: Sequence[Run]) -> list[str]:
    found = {mdl_probe(r) for r in runs if is_mdl(r)}
    return [p for p in PROBE_NAMES if p in found] + sorted(found - set(PROBE_NAMES))


def has_control(runs: Sequence[Run], probe: str) -> bool:
    return any(k.startswith("control_") for r in runs if is_mdl(r) and mdl_probe(r) == probe
               for k in r.metrics.get("train") or {})


def structural_cell(group: Group, layer: int, metric: str, split: str = "test") -> Stat | None:
    return stat(r.value(split, f"layer_{layer}_{metric}") for r in group.runs if r.task == STRUCTURAL)


def mdl_cell(group: Group, probe: str, layer: int, metric: str, split: str, control: bool = False) -> Stat | None:
    name = f"{'control_' if control else ''}layer_{layer}_{metric}"
    return stat(r.value(split, name) for r in group.runs if is_mdl(r) and mdl_probe(r) == probe)


def _columns(runs: Sequence[Run]) -> list[tuple[str, str, str, bool, int]]:
    """(header, probe, metric, control, digits) of every MDL column, per probe: task then control (when coded)."""
    out = []
    for probe in mdl_probes(runs):
        name = PROBE_NAMES.get(probe, probe)
        for control in (False, True) if has_control(runs, probe) else (False,):
            out += [(f"MDL {name}{' control' if control else ''} {suffix}", probe, metric, control, digits)
                    for metric, _, suffix, digits in MDL_METRICS]
    return out


def _split(metric: str) -> str:
    return next(split for m, split, _, _ in MDL_METRICS if m == metric)


def _layer_row(group: Group, layer: int, columns: list) -> tuple[list[str], dict[str, Any]]:
    """One layer of one group: its Markdown cells and its report.json record (each number under its split)."""
    cells = [group.encoder, group.weights, f"layer_{layer}"]
    record: dict[str, Any] = {"encoder": group.encoder, "weights": group.weights, "layer": layer,
                              "relative_depth": layer / (group.layer_count - 1) if group.layer_count > 1 else 0.0,
                              "test": {}, "train": {}}
    for metric, _, digits in STRUCTURAL_METRICS:
        found = structural_cell(group, layer, metric)
        cells.append(fmt_stat(found, digits))
        record["test"][metric] = None if found is None else stat_json(found)
    for _, probe, metric, control, digits in columns:
        found = mdl_cell(group, probe, layer, metric, _split(metric), control)
        cells.append(fmt_stat(found, digits))
        key = f"{probe}_{'control_' if control else ''}{metric}"
        record[_split(metric)][key] = None if found is None else stat_json(found)
    return cells, record


def _paper_rows(width: int) -> list[list[str]]:
    rows = [[PAPER_LABEL, weights, label, fmt(u, 1), fmt(d, 2), fmt(r, 1), fmt(n, 2)] + [MISSING] * width
            for label, weights, u, d, r, n in PAPER.values()]
    return rows + [["paper: linear chain, Hewitt & Manning 2019, PTB WSJ test", MISSING, MISSING,
                    fmt(PAPER_LINEAR_UUAS, 1), MISSING, MISSING, MISSING] + [MISSING] * width]


def _chain_rows(runs: Sequence[Run], width: int) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """Our linear-chain baseline (each word attached to the next), per data set and punctuation rule."""
    by: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        if run.task == STRUCTURAL:
            by.setdefault((run.data, str(run.record.data.get("punct") or "xpos")), []).append(run)
    rows, records = [], []
    for (data, punct), members in sorted(by.items()):
        values = [v for r in members if (v := r.value("test", "linear_chain_uuas")) is not None]
        found = stat(values)                          # the same data gives every encoder the same chain: no ± 0
        found = Stat(values[0], None, len(values)) if values and len(set(values)) == 1 else found
        rows.append([f"baseline: linear chain ({data}, punct {punct})", MISSING, MISSING, fmt_stat(found)]
                    + [MISSING] * (3 + width))
        records.append({"encoder": "baseline: linear chain", "data": data, "punct": punct,
                        "test": {"uuas": None if found is None else stat_json(found)}})
    return rows, records


def chain_baselines(runs: Sequence[Run]) -> list[tuple[str, float]]:
    """(data and punctuation rule, linear-chain test UUAS) per data set and punctuation rule, for the figure: the
    baseline every layer's UUAS is read against."""
    _, records = _chain_rows(runs, 0)
    return [(f"{r['data']}, punct {r['punct']}", r["test"]["uuas"]["mean"]) for r in records
            if r["test"]["uuas"] is not None]


def _empty_notes(runs: Sequence[Run]) -> list[str]:
    """A note where a record has a metric with nothing to score (``<metric>_count`` 0 beside a null value): its cell
    is — because the split had no gold edge, not because the run is missing."""
    empty = sorted({f"{split} {key[: -len('_count')]}" for r in runs if r.task == STRUCTURAL
                    for split, scores in r.metrics.items() for key, value in scores.items()
                    if key.endswith("_count") and value == 0})
    if not empty:
        return []
    return [f"Nothing to score (no gold edge: every sentence one word or punctuation), recorded as null with count 0: "
            f"{', '.join(empty)}; shown as —."]


def _notes(runs: Sequence[Run]) -> list[str]:
    sentences = sorted({int(n) for r in runs if (n := r.record.data.get("train_sentences"))})
    return [
        "Structural probes (Hewitt & Manning 2019), test split: UUAS (%, minimum spanning tree of the predicted "
        "distances against the gold tree, punctuation excluded), DSpr and NSpr (Spearman of predicted and gold "
        "distances / depths, averaged per sentence length 5-50), root % (the least deep word is the gold root).",
        "MDL (Voita & Titov 2020): online codelength of the training labels in bits (train split), compression = "
        "uniform codelength / online codelength, acc. = the probe trained on all blocks (test split); control = "
        "Hewitt & Liang's control task (one random tag per word type). Mean ± sd over runs where several.",
        "Ours: UD English-EWT, " + (f"{', '.join(map(str, sentences))} training sentences" if sentences else
                                    "training sentences as recorded") + "; random weights = the same architecture "
        "drawn by its initialiser (biLM `all`: every weight; `lstm`: trained token layer, random LSTMs).",
        "Paper rows: Hewitt & Manning (2019) Table 1 on PTB WSJ (Stanford Dependencies) with the public 5.5B ELMo, "
        "not our biLM nor our data: not comparable numbers. ELMo0/ELMo1 = its token layer / first biLSTM layer "
        "(ours: layer_0 / layer_1); Proj0 = a randomly initialised BiLSTM over its trained layer 0 (the analogue of "
        "our `random (lstm, ...)` rows); linear chain = every word attached to the next."]


def structural_mdl_table(runs: Sequence[Run]) -> Table:
    """Rows: encoder × weights × layer (Hewitt & Manning's rows after the last biLM block, then the linear chains)."""
    columns = _columns(runs)
    header = ["Encoder", "Weights", "Layer", *[f"{h} (test)" for _, h, _ in STRUCTURAL_METRICS],
              *[c[0] for c in columns]]
    rows, records, paper_at = [], [], None
    for group in groups(runs):
        for layer in group.layers:
            cells, record = _layer_row(group, layer, columns)
            rows.append(cells)
            records.append(record)
        paper_at = len(rows) if group.is_bilm else paper_at
    at = len(rows) if paper_at is None else paper_at
    rows[at:at] = _paper_rows(len(columns))
    chain_rows, chain_records = _chain_rows(runs, len(columns))
    extra = {"paper": {"source": "Hewitt & Manning 2019, Table 1 (PTB WSJ test, the public 5.5B ELMo)",
                       **{name: dict(zip(("layer", "weights", "uuas", "dspr", "root_acc", "nspr"), v))
                          for name, v in PAPER.items()},
                       "linear_chain": {"uuas": PAPER_LINEAR_UUAS}},
             "baselines": chain_records}
    return Table("Structural probes and MDL per encoder and layer", header, rows + chain_rows,
                 _notes(runs) + _empty_notes(runs),
                 key="structural_mdl", records=records, extra=extra)


def depth_points(runs: Sequence[Run], what: str, probe: str | None = None, control: bool = False
                 ) -> list[tuple[Group, list[tuple[float, float]]]]:
    """[(group, [(relative depth, value)])] of one quantity: a structural metric (``probe`` None, test split) or an
    MDL probe's compression (train split; ``control``: the control task's)."""
    out = []
    for group in groups(runs):
        total = group.layer_count
        points = []
        for layer in group.layers:
            found = (structural_cell(group, layer, what) if probe is None
                     else mdl_cell(group, probe, layer, what, "train", control))
            if found is not None:
                points.append((layer / (total - 1) if total > 1 else 0.0, found.mean))
        if points:
            out.append((group, points))
    return out


def _chain_baseline(ax: Any, runs: Sequence[Run]) -> None:
    """The linear-chain UUAS (every word attached to the next) as a grey line: the layers above it beat it."""
    for data, value in chain_baselines(runs):
        ax.axhline(value, color="black", linestyle=(0, (1, 1)), linewidth=1.2,
                   label=f"baseline: linear chain ({data}) {value:.2f}")


def _structural_panel(ax: Any, runs: Sequence[Run], metric: str, probe: str | None, colours: dict[str, str],
                      styles: SeriesStyles) -> None:
    """One quantity against depth: a colour per encoder, a line style per weights (trained, each random twin), a
    marker per task (tags: circles, control: crosses)."""
    for control in ((False, True) if probe and has_control(runs, probe) else (False,)):
        for group, points in depth_points(runs, metric, probe, control):
            colour = colours.setdefault(group.encoder, f"C{len(colours)}")
            ax.plot([x for x, _ in points], [y for _, y in points], color=colour, markersize=4,
                    **styles.of(group.weights, control), label=f"{group.encoder}, {group.weights}{', control' if control else ''}")
    if metric == "uuas" and probe is None:
        _chain_baseline(ax, runs)
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel("relative layer depth")
    ax.set_ylabel("compression (uniform / online)" if probe else "UUAS (%)" if metric == "uuas" else "Spearman")
    ax.grid(True, alpha=0.3)


def structural_mdl_figure(runs: Sequence[Run], path: Path) -> bool:
    """The depth figure for the structural-probe and MDL runs (this section's table): UUAS (with the
    linear-chain baseline), DSpr and NSpr (test), and each MDL probe's compression for the tags (circles) and the
    control task (crosses, train), against relative layer depth; a colour per encoder, a line style per weights
    (trained solid, each random twin its own dash). False (nothing written) without such runs."""
    panels = [(f"{label} (test)", metric, None) for metric, label in (("uuas", "UUAS"), ("dspr", "DSpr"),
                                                                       ("nspr", "NSpr"))
              if depth_points(runs, metric)]
    panels += [(f"MDL compression, {PROBE_NAMES.get(p, p)} probe (train)", "compression", p)
               for p in mdl_probes(runs)]
    if not panels:
        return False
    fig, axes = _panel_grid(len(panels), 3, (4.6, 3.8))
    colours: dict[str, str] = {}
    styles = SeriesStyles()
    for ax, (title, metric, probe) in zip(axes.flat, panels):
        _structural_panel(ax, runs, metric, probe, colours, styles)
        ax.set_title(title, fontsize="small")
    _figure_legend(fig, axes, len(panels))
    figures._save(fig, path)   # through the module: a test may catch the figure there
    return True


FIGURE = "structural_mdl_depth.png"


def render(given: SectionInput) -> Rendered:
    drawn = structural_mdl_figure(given.runs, given.out / FIGURE)
    return Rendered([structural_mdl_table(given.runs)], {FIGURE: drawn},
                    {"structural_mdl": (FIGURE, "Structural probes and MDL by relative layer depth", "")})


def by_step(run: Run) -> list[StepValue]:
    """The distance probe's test UUAS per layer, for the "by training step" section (a series point's record)."""
    if run.task != STRUCTURAL:
        return []
    return [StepValue("UUAS (test)", int(m.group(1)), float(v)) for k, v in sorted((run.metrics.get("test") or {}).items())
            if (m := re.fullmatch(r"layer_(\d+)_uuas", k)) and isinstance(v, (int, float))]


SECTION = Section(key="structural_mdl", order=2, render=render, summary="Structural-probe and MDL runs",
                  by_step=by_step)
