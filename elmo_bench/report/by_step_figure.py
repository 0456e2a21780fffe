"""The "by training step" figure (elmo_bench.report.by_step): a panel per series and metric, the metric against the
tokens seen (log x; the step where a point of the series does not say its tokens), a line per layer, the probe's
interval shaded where recorded. A duplicate point (identical weights at a later step) is not drawn again: a dotted
line at its position says "duplicate of step N"."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from elmo_bench.report import figures
from elmo_bench.report.by_step import Point, layers_of, metrics_of
from elmo_bench.report.figures import _figure_legend, _panel_grid

FIGURE = "by_training_step.png"


def _x(series: Sequence[Point]) -> tuple[str, dict[int, float]]:
    """The x axis of one series: tokens seen when every point says them, else the step; each point's position."""
    if all(p.tokens is not None for p in series):
        return "tokens seen (log)", {p.step: float(p.tokens or 0) for p in series}
    return "training step (log)", {p.step: float(p.step) for p in series}


def _scale(ax: Any, xs: Sequence[float]) -> None:
    """Log x; symmetric-log near zero when a point is at 0 (a series' untrained start)."""
    positive = [x for x in xs if x > 0]
    if positive and len(positive) < len(xs):
        ax.set_xscale("symlog", linthresh=min(positive))
    elif positive:
        ax.set_xscale("log")


def _panel(ax: Any, series: Sequence[Point], metric: str, layers: Sequence[int]) -> None:
    label, where = _x(series)
    drawn = [p for p in series if p.duplicate_of is None]
    for layer in layers:
        found = [(where[p.step], m) for p in drawn if (m := p.mean(metric, layer)) is not None]
        if not found:
            continue
        xs, colour = [x for x, _ in found], f"C{layer % 10}"
        ax.plot(xs, [m[0] for _, m in found], color=colour, marker="o", markersize=3, label=f"layer {layer}")
        if all(m[1] is not None and m[2] is not None for _, m in found):
            ax.fill_between(xs, [m[1] for _, m in found], [m[2] for _, m in found], color=colour, alpha=0.15)
    for point in series:
        if point.duplicate_of is not None and any(point.mean(metric, k) is not None for k in layers):
            ax.axvline(where[point.step], color="grey", linestyle=":", linewidth=1)
            ax.text(where[point.step], 0.98, f"step {point.step}: duplicate of step {point.duplicate_of}",
                    transform=ax.get_xaxis_transform(), rotation=90, va="top", ha="right", fontsize="xx-small",
                    color="grey")
    _scale(ax, list(where.values()))
    ax.set_xlabel(label)
    ax.set_ylabel(metric, fontsize="small")
    ax.grid(True, alpha=0.3)


def by_step_figure(found: Sequence[Point], path: Path) -> bool:
    """A panel per (series, metric); False (nothing written) without points."""
    panels = [(series, metric) for series in dict.fromkeys(p.series for p in found)
              for metric in metrics_of([p for p in found if p.series == series])]
    if not panels:
        return False
    layers = layers_of(found)
    fig, axes = _panel_grid(len(panels), 3, (4.6, 3.6))
    several = len({series for series, _ in panels}) > 1
    for ax, (series, metric) in zip(axes.flat, panels):
        mine = [p for p in found if p.series == series]
        _panel(ax, mine, metric, layers)
        ax.set_title(f"{series}: {metric}" if several else metric, fontsize="small")
    _figure_legend(fig, axes, len(panels))
    figures._save(fig, path)   # through the module: a test may catch the figure there
    return True
