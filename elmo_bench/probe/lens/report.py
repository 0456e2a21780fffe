"""Probe lens's part of the report, declared by config.py (``report``): its own section, one table per encoder (and
experiment) of what each layer already predicts, read through the model's own head: rows lens × direction, per layer
the gold word's bits per token with its paired bootstrap 95% interval over sentences and the KL to the final
layer beside; the random twin's rows (``random/...`` keys of the same record) as the baseline below. One figure:
bits per layer, a panel per table, a line per lens and direction (the twin dashed), the intervals shaded."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.report import figures
from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.experiments import apart
from elmo_bench.report.figures import _figure_legend, _panel_grid
from elmo_bench.report.sections import Rendered, Section, SectionInput, StepValue
from elmo_bench.report.table import MISSING, Table

#: ``[random/]<lens>/layer_<k>_<direction>_bits`` (metrics.dev, probe.py's contract)
BITS = re.compile(r"(?:(random)/)?(logit|tuned)/layer_(\d+)_(forward|backward)_bits")
LENS_ORDER, DIRECTION_ORDER = ("logit", "tuned"), ("forward", "backward")
#: the numbers each row's report.json record keeps per layer
KEPT = ("bits", "bits_lo", "bits_hi", "kl", "ppl", "top1", "agree")
#: the figure's file: ``<probe>`` + this (a copied folder draws its own)
FIGURE = "_bits_by_layer.png"


@dataclass
class Block:
    """One table: an encoder (and experiment) with its runs, the layers they score and their streams."""

    label: str
    runs: list[Run]
    layers: list[int]
    streams: list[tuple[str, str, str]]      # (prefix "" or "random/", lens, direction) in row order


def _streams(runs: Sequence[Run]) -> tuple[list[int], list[tuple[str, str, str]]]:
    found = [m for r in runs for key in (r.metrics.get("dev") or {}) if (m := BITS.fullmatch(key))]
    layers = sorted({int(m.group(3)) for m in found})
    streams = {(f"{m.group(1)}/" if m.group(1) else "", m.group(2), m.group(4)) for m in found}
    return layers, sorted(streams, key=lambda s: (s[0] != "", LENS_ORDER.index(s[1]), DIRECTION_ORDER.index(s[2])))


def blocks(runs: Sequence[Run], record_task: str) -> list[Block]:
    """The lens records by encoder (report order) and experiment (records that differ in what they measured, e.g.
    the dev sentences scored, are never averaged)."""
    mine = [r for r in runs if r.task == record_task]
    names = EncoderNames(mine)
    out = []
    for key, group in names.split(mine):
        for words, part in apart(group):
            if part:
                out.append(Block(names.label(key) + (f" ({words})" if words else ""), part, *_streams(part)))
    return out


def mean(runs: Sequence[Run], stream: tuple[str, str, str], layer: int, measure: str) -> float | None:
    """``measure`` of one stream and layer, the mean over the block's runs (None: no run records it)."""
    prefix, lens, direction = stream
    values = [v for r in runs if (v := r.value("dev", f"{prefix}{lens}/layer_{layer}_{direction}_{measure}"))
              is not None]
    return sum(values) / len(values) if values else None


def _bits_cell(runs: Sequence[Run], stream: tuple[str, str, str], layer: int) -> str:
    bits, low, high = (mean(runs, stream, layer, m) for m in ("bits", "bits_lo", "bits_hi"))
    if bits is None:
        return MISSING
    return f"{bits:.3f} [{low:.3f}, {high:.3f}]" if low is not None and high is not None else f"{bits:.3f}"


def _kl_cell(runs: Sequence[Run], stream: tuple[str, str, str], layer: int) -> str:
    found = mean(runs, stream, layer, "kl")
    return MISSING if found is None else f"{found:.3f}"


def row_label(stream: tuple[str, str, str]) -> str:
    prefix, lens, direction = stream
    return ("random twin: " if prefix else "") + f"{lens} lens, {direction}"


def lens_table(block: Block, key: str, probe: str) -> Table:
    """Rows: lens × direction (the random twin's last); per layer bits/token [95% interval] and KL to final."""
    header = ["Lens", *[h for k in block.layers for h in (f"layer {k} bits/token [95% CI]", f"layer {k} KL")], "n"]
    rows: list[list[str]] = []
    records: list[dict[str, Any]] = []
    for stream in block.streams:
        cells = [c for k in block.layers for c in (_bits_cell(block.runs, stream, k), _kl_cell(block.runs, stream, k))]
        rows.append([row_label(stream), *cells, str(len(block.runs))])
        records.append({"encoder": block.label, "weights": "random twin" if stream[0] else "trained",
                        "lens": stream[1], "direction": stream[2], "runs": len(block.runs),
                        **{f"layer_{k}": {m: mean(block.runs, stream, k, m) for m in KEPT} for k in block.layers}})
    sentences = sorted({str(r.record.data.get("dev_sentences")) for r in block.runs})
    notes = [f"Probe {probe}: each layer read through the model's own output head (logit lens: as it is; tuned lens: "
             "through an affine translator trained to match the final layer). bits/token: cross-entropy of the gold "
             "next (forward) or previous (backward) word, with its paired bootstrap 95% interval over sentences; "
             "KL: to the final layer's distribution, bits. Random twin: the encoder with all weights re-drawn "
             "(random_init=all), read through the trained head, the baseline. "
             f"UD EWT dev sentences scored: {', '.join(sentences)}; n = runs (several: each number's mean)."]
    return Table(f"Probe {probe}: {block.label}, bits per token by layer", header, rows, notes, key=key,
                 records=records)


def table_keys(found: Sequence[Block], probe: str) -> list[str]:
    """report.json keys: ``<probe>_<encoder label in words>``, numbered where two would be equal."""
    keys: list[str] = []
    for block in found:
        base = f"{probe}_" + (re.sub(r"[^a-z0-9]+", "_", block.label.lower()).strip("_") or "encoder")
        key, count = base, 1
        while key in keys:
            count += 1
            key = f"{base}_{count}"
        keys.append(key)
    return keys


def _panel(ax: Any, block: Block) -> None:
    """Bits per layer of one block: a colour per lens and direction, the twin dashed, intervals shaded."""
    for stream in block.streams:
        points = [(k, mean(block.runs, stream, k, "bits"), mean(block.runs, stream, k, "bits_lo"),
                   mean(block.runs, stream, k, "bits_hi")) for k in block.layers]
        points = [p for p in points if p[1] is not None]
        if not points:
            continue
        colour = f"C{LENS_ORDER.index(stream[1]) * 2 + DIRECTION_ORDER.index(stream[2])}"
        xs = [p[0] for p in points]
        ax.plot(xs, [p[1] for p in points], color=colour, marker="o", markersize=4,
                linestyle="--" if stream[0] else "-", label=row_label(stream))
        if all(p[2] is not None and p[3] is not None for p in points):
            ax.fill_between(xs, [p[2] for p in points], [p[3] for p in points], color=colour, alpha=0.15)
    ax.set_xticks(block.layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("bits per token (gold word)")
    ax.set_title(block.label, fontsize="small")
    ax.grid(True, alpha=0.3)


def lens_figure(found: Sequence[Block], path: Path) -> bool:
    """A panel per block; False (nothing written) without blocks."""
    if not found:
        return False
    fig, axes = _panel_grid(len(found), 3, (4.6, 3.8))
    for ax, block in zip(axes.flat, found):
        _panel(ax, block)
    _figure_legend(fig, axes, len(found))
    figures._save(fig, path)   # through the module: a test may catch the figure there
    return True


def render(given: SectionInput) -> Rendered:
    found = blocks(given.runs, given.record_task)
    keys = table_keys(found, given.probe)
    tables = [lens_table(block, key, given.probe) for block, key in zip(found, keys)]
    name = given.probe + FIGURE
    drawn = lens_figure(found, given.out / name)
    after = {keys[-1]: (name, f"Probe {given.probe}: bits per token by layer (intervals shaded)", "")} if keys else {}
    return Rendered(tables, {name: drawn}, after)


def by_step(run: Run) -> list[StepValue]:
    """Each lens and direction's bits per token per layer with its interval (dev; the random twin's left out), for
    the "by training step" section (a series point's record)."""
    out = []
    for key in sorted(run.metrics.get("dev") or {}):
        found = BITS.fullmatch(key)
        if found is None or found.group(1):
            continue
        value, low, high = (run.value("dev", key + end) for end in ("", "_lo", "_hi"))
        if value is not None:
            out.append(StepValue(f"{found.group(2)} lens bits/token, {found.group(4)} (dev)", int(found.group(3)),
                                 value, low, high))
    return out


SECTION = Section(order=7, render=render, summary="probe={probe} runs", by_step=by_step)
