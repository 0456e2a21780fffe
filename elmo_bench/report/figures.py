"""Figure 1 (sample efficiency), Figure 2 (learned layer weights), the per-epoch dev curves and, with several
encoders, probe accuracy by relative layer depth, as PNGs, written atomically; and the panel, legend and series-style
helpers the probes' own figures draw with (each in its probe's report section, elmo_bench.report.sections)."""
from __future__ import annotations

import io
import math
import re
from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from elmo_bench.base.atomic import atomic_write_bytes  # noqa: E402
from elmo_bench.report.collect import Run  # noqa: E402
from elmo_bench.report.encoder_names import EncoderNames  # noqa: E402
from elmo_bench.report.probe_depth import floors, metrics, probe_depth_curves  # noqa: E402
from elmo_bench.report.run_tables import (  # noqa: E402
    dev_curves,
    learned_mixes,
    mix_layer_names,
    sample_efficiency_curves,
)
from elmo_bench.report.sections import NO_PLUGINS, ReportPlugins  # noqa: E402

LABELS = {"glove": "baseline (GloVe)", "glove_elmo": "+ELMo", "elmo": "ELMo only"}


def _small_panel(ax: Any, title: str, legend: bool = True) -> None:
    """The finish of one small multi-panel plot: title, light grid, legend (unless the figure has one)."""
    ax.set_title(title, fontsize="small")
    ax.grid(True, alpha=0.3)
    if legend:
        ax.legend(fontsize="x-small")


def _panel_grid(count: int, max_cols: int, panel: tuple[float, float]) -> tuple[Any, Any]:
    """A figure of ``count`` panels, at most ``max_cols`` a row, each ``panel`` inches (width, height); axes always
    2-D; constrained layout, so titles never overlap the row above's axis labels."""
    cols = min(max_cols, count)
    rows = math.ceil(count / cols)
    return plt.subplots(rows, cols, figsize=(panel[0] * cols, panel[1] * rows), squeeze=False, layout="constrained")


def _place_legend(fig: Any, axes: Any, used: int, handles: Sequence[Any], labels: Sequence[str],
                  ncols: int = 2, fontsize: str = "x-small") -> None:
    """The figure's one legend: in the last row's slots past the first ``used`` panels where the grid has some
    (issue 56: a grid with blank slots), else below the panels; either way it covers no panel."""
    spare = list(axes.flat)[used:]
    if not spare:
        fig.legend(handles, labels, loc="outside lower center", ncols=ncols, fontsize=fontsize)
        return
    rows, cols = axes.shape
    grid = spare[0].get_subplotspec().get_gridspec()
    for ax in spare:
        ax.remove()
    holder = fig.add_subplot(grid[rows - 1, cols - len(spare):])
    holder.axis("off")
    holder.legend(handles, labels, loc="center", ncols=1 if len(spare) == 1 else ncols, fontsize=fontsize)


def _save(fig: plt.Figure, path: Path) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())


def _curve_label(embedder: str, encoder: str) -> str:
    """"+ELMo" / "baseline (GloVe)" with one encoder; "+<encoder>" / "<encoder> only" beside others."""
    if not encoder:
        return LABELS.get(embedder, embedder)
    return {"glove_elmo": f"+{encoder}", "elmo": f"{encoder} only"}.get(embedder, f"{embedder}: {encoder}")


def figure1(runs: Sequence[Run], path: Path, names: EncoderNames | None = None) -> bool:
    """Metric vs training fraction (log x), one line per embedder (and encoder, when there are several), mean with
    a ±std band; False if no data."""
    points = sample_efficiency_curves(runs, names)
    if not points:
        return False
    fig, axes = plt.subplots(1, len(points), figsize=(4.2 * len(points), 3.4), squeeze=False)
    for ax, ((task, data), curves) in zip(axes[0], points.items()):
        for (embedder, encoder), by_fraction in sorted(curves.items()):
            xs = sorted(by_fraction)
            mean = [by_fraction[x].mean for x in xs]
            std = [by_fraction[x].std or 0.0 for x in xs]
            (line,) = ax.plot([100 * x for x in xs], mean, marker="o", label=_curve_label(embedder, encoder))
            ax.fill_between([100 * x for x in xs], [m - s for m, s in zip(mean, std)],
                            [m + s for m, s in zip(mean, std)], color=line.get_color(), alpha=0.2)
        metric = next((r.main_metric for r in runs if r.task == task), "")
        ax.set_xscale("log")
        ax.set_xlabel("training data (%)")
        ax.set_ylabel(metric)
        ax.set_title(f"{task} ({data})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    _save(fig, path)
    return True


def figure2(runs: Sequence[Run], path: Path) -> bool:
    """Bar charts of the softmax layer weights of every task's input and output mixes, one panel per (task, data
    with its training fraction, mix), titled with all three and the seeds averaged; False if no data."""
    mixes = learned_mixes(runs)
    panels = [(task, data, where, weights, n) for (task, data), by in mixes.items()
              for where, (weights, n) in by.items()]
    if not panels:
        return False
    fig, axes = _panel_grid(len(panels), 4, (3.3, 2.9))
    for ax, (task, data, where, weights, n) in zip(axes.flat, panels):
        ax.bar(range(len(weights)), weights, color=MIX_COLOURS.get(where, "tab:green"))
        ax.axhline(1.0 / len(weights), color="gray", linestyle="--", linewidth=0.8)   # the plain average
        names = mix_layer_names(runs, len(weights))
        subset = names != [str(k) for k in range(len(weights))]    # encoder.layers kept some: name them by number
        ax.set_xticks(range(len(weights)))
        if subset:
            ax.set_xticklabels(names)
        ax.set_ylim(0, 1)
        ax.set_xlabel("model layer" if subset else "biLM layer")
        ax.set_ylabel("softmax weight s_j")
        ax.set_title(f"{task}: {data}\n{where} mix, {n} seed{'s' if n != 1 else ''}", fontsize="small")
    _figure2_legend(fig, axes, len(panels), sorted({where for _, _, where, _, _ in panels}))
    _save(fig, path)
    return True


MIX_COLOURS = {"input": "tab:blue", "output": "tab:orange"}


def _figure2_legend(fig: Any, axes: Any, used: int, places: Sequence[str]) -> None:
    """Figure 2's one legend, in the grid's spare slots or below the panels: the mixes' colours and the dashed line
    (issue 45: it was unexplained)."""
    handles = [Patch(color=MIX_COLOURS.get(where, "tab:green"), label=f"{where} mix") for where in places]
    handles.append(Line2D([], [], color="gray", linestyle="--", linewidth=0.8,
                          label="equal weights, 1 / number of layers (a plain average)"))
    _place_legend(fig, axes, used, handles, [h.get_label() for h in handles], ncols=len(handles), fontsize="small")


def dev_curve_figure(runs: Sequence[Run], path: Path) -> bool:
    """One panel per Table 1 task: dev main metric against epoch, one line per run (colour = embedder, style =
    seed); False if no run has a history."""
    curves = dev_curves(runs)
    if not curves:
        return False
    fig, axes = _panel_grid(len(curves), 3, (4.2, 3.2))
    styles = ["-", "--", ":", "-."]
    colours: dict[str, str] = {}                 # one colour per embedder in every panel: one legend names them
    for ax, ((task, data), lines) in zip(axes.flat, curves.items()):
        seeds = sorted({run.seed for run, _ in lines})
        for run, points in lines:
            colour = colours.setdefault(run.embedder, f"C{len(colours)}")
            ax.plot([e for e, _ in points], [v for _, v in points], color=colour, marker="o", markersize=3,
                    linestyle=styles[seeds.index(run.seed) % len(styles)],
                    label=f"{LABELS.get(run.embedder, run.embedder)}, seed {run.seed}")
        ax.set_xlabel("epoch")
        ax.set_ylabel(f"dev {lines[0][0].main_metric}")
        _small_panel(ax, f"{task} ({data})", legend=False)
    _figure_legend(fig, axes, len(curves))
    _save(fig, path)
    return True


def probe_depth_figure(runs: Sequence[Run], path: Path, names: EncoderNames | None = None,
                       plugins: ReportPlugins = NO_PLUGINS) -> bool:
    """One panel per probe and data set: probe score against relative layer depth, a line per encoder (the points of
    elmo_bench.report.probe_depth), the converged POS probe's most-frequent-tag baseline (Table 6's) dotted; False (nothing written) unless the probe runs come from several encoders."""
    curves = probe_depth_curves(runs, names, plugins)
    if not curves:
        return False
    baselines, axis = floors(runs, plugins), metrics(runs, plugins)
    fig, axes = _panel_grid(len(curves), 3, (4.2, 3.2))
    colours: dict[str, str] = {}                 # one colour per encoder in every panel: one legend names them
    for ax, ((probe, data), lines) in zip(axes.flat, curves.items()):
        for label, points in lines.items():
            ax.plot([p.depth for p in points], [p.value.mean for p in points], marker="o", markersize=4, label=label,
                    color=colours.setdefault(label, f"C{len(colours)}"))
        for value in baselines.get((probe, data), []):      # issue 56: a layer below it had looked fine
            ax.axhline(value, color="black", linestyle=(0, (1, 1)), linewidth=1.2,
                       label=f"baseline: most frequent tag, {data}: {value:.2f}")
        ax.set_xlim(-0.05, 1.05)
        ax.set_xlabel("relative layer depth")
        ax.set_ylabel(axis[(probe, data)])
        _small_panel(ax, f"{probe}: {data}", legend=False)
    _figure_legend(fig, axes, len(curves))
    _save(fig, path)
    return True


def _figure_legend(fig: Any, axes: Any, used: int | None = None) -> None:
    """One legend for the first ``used`` panels (all by default), each series once, in the grid's spare slots or
    below the panels: none of them hides a line."""
    used = axes.size if used is None else used
    legend = {label: handle for ax in list(axes.flat)[:used] for handle, label in zip(*ax.get_legend_handles_labels())}
    _place_legend(fig, axes, used, list(legend.values()), list(legend))


#: a line style per weights (trained, then each random twin) and a marker pair (tags, control task) per budget (the
#: plain label, then ", N train sentences", ", seeds ..."), shared by a figure's panels: no two series alike
STYLES = ("-", "--", ":", "-.")
MARKERS = (("o", "x"), ("s", "+"), ("^", "1"), ("D", "2"), ("v", "3"), ("P", "4"))
WEIGHTS = re.compile(r"trained|random \([^)]*\)")


class SeriesStyles:
    """Line style and marker of a weights label ("random (all, seed 0), 2000 train sentences"): the line style by
    the weights (trained solid, each random twin its own dash), the marker by what follows (training size, seeds)."""

    def __init__(self) -> None:
        self.lines: dict[str, str] = {}
        self.markers: dict[str, tuple[str, str]] = {}

    def of(self, weights: str, control: bool = False) -> dict[str, str]:
        found = WEIGHTS.match(weights)
        base = found.group(0) if found else weights
        line = self.lines.setdefault(base, STYLES[len(self.lines) % len(STYLES)])
        marker = self.markers.setdefault(weights[len(base):], MARKERS[len(self.markers) % len(MARKERS)])
        return {"linestyle": line, "marker": marker[1] if control else marker[0]}


