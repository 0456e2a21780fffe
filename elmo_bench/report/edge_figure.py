"""The edge-probing pipeline figure (Tenney, Das & Pavlick 2019, Figure 1's layout): one row per task, one column
per encoder; in each panel, against relative depth l / L, the full mix's weights w_l (line) and each layer's share
of the gain over the lexical layer, Δ(l) / Σ Δ (bars, mean over the seeds that have every prefix), with the expected
layer (solid) and the centre of gravity (dashed) marked. Drawn from the edge table's records
(elmo_bench.report.edge_report), so it shows exactly what the table says.

Issue 45: the panel title carries the headline number (full − lexical F1) and the two depths, so the one legend
(below the panels) hides no bar; the x range holds every bar whole; the shared y axis is labelled; a task without a
full-mix run says so instead of drawing an empty panel.

Issue 56: the grid is in step (a row per task, a column per encoder; a table row with nothing to draw is named in
the caption, not given a row of its own beside blank slots), titles say the data's trainer settings in words, and
every y axis includes 0 and spans at least MIN_SPAN (the caption says so): 0.007 of weight noise fills no panel.

Issue 46: an encoder that keeps some of a model's layers (a record's ``layer_indices``: 0, 4, 8, 11) is drawn at
those layers' relative depths l / L (L its deepest layer), each bar as wide as BAR of the narrowest gap between two
kept layers; without ``layer_indices`` the layers are 0..L."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Sequence

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from elmo_bench.report.figures import _save, plt

BAR = 0.6                       # a bar's width, in layers
SHARE_COLOUR, WEIGHT_COLOUR = "tab:blue", "tab:orange"
MIN_SPAN = 0.5                  # the least a y axis spans: noise of 0.007 must not fill a panel
TITLE_SIZE = 9                  # points
MARKS = (("expected_layer", "-", "expected layer"), ("centre_of_gravity", "--", "centre of gravity"))


def _shares(deltas: dict[str, list[float]]) -> list[float] | None:
    """Mean over seeds of Δ(l) / Σ Δ (seeds whose total gain is positive), or None."""
    rows = [[d / sum(ds) for d in ds] for ds in deltas.values() if ds and sum(ds) > 0]
    return [sum(col) / len(rows) for col in zip(*rows)] if rows else None


def data_words(data: str) -> str:
    """The table's data label in words: its trainer settings ("ud_ewt, lr_plateau_factor=None, ...", what tells two
    rows of one task apart) become "no LR plateau schedule", "LR ×0.5 on a plateau (patience 5)", "epochs 10" (issue
    56: a panel title was a config diff)."""
    parts = data.split(", ")
    base = ", ".join(p for p in parts if "=" not in p)
    settings = dict(p.split("=", 1) for p in parts if "=" in p)
    plateau = {k: v for k, v in settings.items() if k.startswith("lr_plateau_")}
    words = []
    if plateau:
        words.append("no LR plateau schedule" if all(v == "None" for v in plateau.values()) else
                     f"LR ×{plateau.get('lr_plateau_factor')} on a plateau (patience "
                     f"{plateau.get('lr_plateau_patience')})")
    words += [f"no {k.replace('_', ' ')}" if v == "None" else f"{k.replace('_', ' ')} {v}"
              for k, v in settings.items() if k not in plateau]
    return ", ".join([base, *words]) if base else ", ".join(words)


def _title(record: dict[str, Any]) -> str:
    """Task and encoder, data (in words), the headline gain, then the two depths (— where the table has none)."""
    gain = record["gain"]["mean"]
    depths = ", ".join(f"{label} " + ("—" if record[key]["mean"] is None else f"{record[key]['mean']:.2f}")
                       for key, _, label in MARKS)
    headline = "full − lexical —" if gain is None else f"full − lexical {gain:+.2f} test F1"
    return f"{record['task']}: {record['encoder']}\n{data_words(record['data'])}\n{headline}\n{depths}"


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
    low, high = ax.get_ylim()
    low = min(low, 0.0)                                  # the bars stand on 0: the axis shows it
    ax.set_ylim(low, max(high, low + MIN_SPAN))
    ax.set_xlabel("relative depth l / L")
    ax.set_ylabel("mix weight / Δ share")
    ax.grid(True, alpha=0.3)
    return True


def drawable(record: dict[str, Any]) -> bool:
    """Whether a row has something to draw: its Δ shares (a positive gain) or the full mix's weights."""
    return bool(_shares(record["deltas"]) or record["weights"])


def _why_not(record: dict[str, Any]) -> str:
    if record["full"]["mean"] is None:
        return "no full-mix run (mix=learned)"
    return "no recorded mix weights and no positive gain"


Grid = list[list[dict[str, Any] | None]]


def grid(records: Sequence[dict[str, Any]]) -> tuple[Grid, list[str]]:
    """The panels in step: a row per task and data (the data's trainer settings set apart only where one encoder
    has two drawable rows of a task: then a row each), a column per encoder; rows without anything to draw are left
    out. (rows of records, None where an encoder has nothing to draw there; the encoders)."""
    shown = [r for r in records if drawable(r)]
    encoders = list(dict.fromkeys(r["encoder"] for r in shown))
    cells: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}
    for record in shown:
        row = cells.setdefault((record["task"], record["data"].split(", ")[0]), {})
        row.setdefault(record["encoder"], []).append(record)
    rows: Grid = []
    for by_encoder in cells.values():
        for i in range(max(len(found) for found in by_encoder.values())):
            rows.append([found[i] if i < len(found := by_encoder.get(e, [])) else None for e in encoders])
    return rows, encoders


def _hole(ax: Any, task: str, encoder: str, records: Sequence[dict[str, Any]]) -> None:
    """A slot of the grid where this encoder has nothing to draw for the row's task: a sentence says why."""
    ax.axis("off")
    mine = [r for r in records if r["task"] == task and r["encoder"] == encoder]
    why = ("no other setting of this task" if any(drawable(r) for r in mine) else
           _why_not(mine[0]) if mine else "no run of this task")
    ax.text(0.5, 0.5, f"{task}: {encoder}\n{why}", ha="center", va="center", fontsize=TITLE_SIZE,
            transform=ax.transAxes)


def caption(records: Sequence[dict[str, Any]], width: int = 140) -> str:
    """What the figure says above its panels: the y axes' span and every table row it does not draw (and why),
    each wrapped at ``width`` characters (the figure's width)."""
    lines = [f"y axes include 0 and span at least {MIN_SPAN} (weights and shares are fractions of 1), so a "
             "difference smaller than that is not magnified"]
    lines += [f"not drawn: {r['task']}: {r['encoder']}, {data_words(r['data'])}: {_why_not(r)}"
              for r in records if not drawable(r)]
    return "\n".join(textwrap.fill(line, width) for line in lines)


def _legend(fig: Any) -> None:
    """One legend for every panel, below them: it covers no bar."""
    handles = [Patch(color=SHARE_COLOUR, alpha=0.5, label="Δ share: layer's share of full − lexical (dev)"),
               Line2D([], [], color=WEIGHT_COLOUR, marker="o", markersize=3, label="full mix's weight w_l"),
               *[Line2D([], [], color="black", linestyle=style, linewidth=1, label=label) for _, style, label in MARKS]]
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize="small")


def edge_pipeline_figure(records: Sequence[dict[str, Any]], path: Path) -> bool:
    """False (nothing written) without edge-probing records. A table row with nothing to draw is named in the
    caption (issue 56: it took a row of its own, a sentence beside blank slots)."""
    if not records:
        return False
    rows, encoders = grid(records)
    cols = max(len(encoders), 1)
    text = caption(records, 60 * cols)
    fig, axes = plt.subplots(max(len(rows), 1), cols, squeeze=False, layout="constrained",
                             figsize=(4.4 * cols, 3.6 * max(len(rows), 1) + 0.15 * text.count("\n")))
    for i, row in enumerate(rows):
        for j, record in enumerate(row):
            task = next(r["task"] for r in row if r is not None)
            if record is None:
                _hole(axes[i][j], task, encoders[j], records)
            else:
                _panel(axes[i][j], record)
                axes[i][j].set_title(_title(record), fontsize=TITLE_SIZE)
    if not rows:                                    # every row without anything to draw: the caption says so
        axes[0][0].axis("off")
    fig.suptitle(text, fontsize="small")
    _legend(fig)
    _save(fig, path)
    return True
