"""The edge-probing pipeline figure (Tenney, Das & Pavlick 2019, Figure 1's layout): one row per task, one column
per encoder; in each panel, against relative depth l / L, the full mix's weights w_l (line) and each layer's share
of the gain over the lexical layer, Δ(l) / Σ Δ (bars, mean over the seeds that have every prefix), with the expected
layer (solid) and the centre of gravity (dashed) marked. Drawn from the edge table's records
(elmo_bench.report.edge_report), so it shows exactly what the table says.

Issue 45: the panel title carries the headline number (full − lexical F1) and the two depths, so the one legend
(below the panels) hides no bar; the x range holds every bar whole; the shared y axis is labelled; a task without a
full-mix run says so instead of drawing an empty panel.

Issue 46: an encoder that keeps some of a model's layers (a record's ``layer_indices``: 0, 4, 8, 11) is drawn at
those layers' relative depths l / L (L its deepest layer), each bar as wide as BAR of the narrowest gap between two
kept layers; without ``layer_indices`` the layers are 0..L."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from elmo_bench.report.figures import _save, plt

BAR = 0.6                       # a bar's width, in layers
SHARE_COLOUR, WEIGHT_COLOUR = "tab:blue", "tab:orange"
MARKS = (("expected_layer", "-", "expected layer"), ("centre_of_gravity", "--", "centre of gravity"))


def _shares(deltas: dict[str, list[float]]) -> list[float] | None:
    """Mean over seeds of Δ(l) / Σ Δ (seeds whose total gain is positive), or None."""
    rows = [[d / sum(ds) for d in ds] for ds in deltas.values() if ds and sum(ds) > 0]
    return [sum(col) / len(rows) for col in zip(*rows)] if rows else None


def _title(record: dict[str, Any]) -> str:
    """Task, encoder and data, then the headline gain and the two depths (— where the table has none)."""
    gain = record["gain"]["mean"]
    depths = ", ".join(f"{label} " + ("—" if record[key]["mean"] is None else f"{record[key]['mean']:.2f}")
                       for key, _, label in MARKS)
    headline = "full − lexical —" if gain is None else f"full − lexical {gain:+.2f} test F1"
    return f"{record['task']}: {record['encoder']}\n{record['data']}\n{headline}; {depths}"


def layer_numbers(record: dict[str, Any]) -> list[int]:
    """The model's numbers of the record's layers, in the encoder's order: ``layer_indices``, else 0..L."""
    return list(record["layer_indices"]) if "layer_indices" in record else list(range(record["layers"]))


def _panel(ax: Any, record: dict[str, Any]) -> bool:
    """Draw one task × encoder; False (nothing drawn) without a full-mix run (no weights, no gain to share)."""
    numbers = layer_numbers(record)
    scale = max(record["layers"] - 1, 1)
    ordered = sorted(numbers)
    width = BAR * min([b - a for a, b in zip(ordered, ordered[1:])] or [1]) / scale
    shares = _shares(record["deltas"])
    if not shares and not record["weights"]:
        return False
    if shares:
        ax.bar([l / scale for l in numbers[1:]], shares, width=width, alpha=0.5, color=SHARE_COLOUR)
    if record["weights"]:
        line = sorted(zip(numbers, record["weights"]))        # by depth, whatever order the encoder gave
        ax.plot([l / scale for l, _ in line], [w for _, w in line], marker="o", markersize=3, color=WEIGHT_COLOUR)
    for key, style, _ in MARKS:
        if record[key]["mean"] is not None:
            ax.axvline(record[key]["mean"] / scale, color="black", linestyle=style, linewidth=1)
    half = width / 2 + 0.05                # the last bar, centred on 1, must end inside the axes
    ax.set_xlim(-half, 1 + half)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1])            # depth runs 0..1: no tick beyond it
    ax.set_xlabel("relative depth l / L")
    ax.set_ylabel("mix weight / Δ share")
    ax.grid(True, alpha=0.3)
    return True


def _missing(ax: Any, record: dict[str, Any]) -> None:
    """A task × encoder without a full-mix run: a sentence, not an empty panel with an empty legend."""
    ax.axis("off")
    ax.text(0.5, 0.5, f"{record['task']}: {record['encoder']}\nno full-mix run (mix=learned):\nnothing to draw",
            ha="center", va="center", fontsize="small", transform=ax.transAxes)


def _legend(fig: Any) -> None:
    """One legend for every panel, below them: it covers no bar."""
    handles = [Patch(color=SHARE_COLOUR, alpha=0.5, label="Δ share: layer's share of full − lexical (dev)"),
               Line2D([], [], color=WEIGHT_COLOUR, marker="o", markersize=3, label="full mix's weight w_l"),
               *[Line2D([], [], color="black", linestyle=style, linewidth=1, label=label) for _, style, label in MARKS]]
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize="small")


def edge_pipeline_figure(records: Sequence[dict[str, Any]], path: Path) -> bool:
    """False (nothing written) without edge-probing records."""
    if not records:
        return False
    encoders = list(dict.fromkeys(r["encoder"] for r in records))
    rows = list(dict.fromkeys((r["task"], r["data"]) for r in records))
    fig, axes = plt.subplots(len(rows), len(encoders), figsize=(3.9 * len(encoders), 3.0 * len(rows)),
                             squeeze=False, layout="constrained")
    for i, (task, data) in enumerate(rows):
        for j, encoder in enumerate(encoders):
            ax = axes[i][j]
            found = [r for r in records if r["task"] == task and r["data"] == data and r["encoder"] == encoder]
            if not found:
                ax.axis("off")
            elif _panel(ax, found[0]):
                ax.set_title(_title(found[0]), fontsize="x-small")
            else:
                _missing(ax, found[0])
    _legend(fig)
    _save(fig, path)
    return True
