"""The edge-probing pipeline figure (Tenney, Das & Pavlick 2019, Figure 1's layout): one row per task, one column
per encoder; in each panel, against relative depth l / L, the full mix's weights w_l (line) and each layer's share
of the gain over the lexical layer, Δ(l) / Σ Δ (bars, mean over the seeds that have every prefix), with the expected
layer (solid) and the centre of gravity (dashed) marked. Drawn from the edge table's records
(elmo_bench.report.edge_report), so it shows exactly what the table says."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from elmo_bench.report.figures import _save, _small_panel, plt


def _shares(deltas: dict[str, list[float]]) -> list[float] | None:
    """Mean over seeds of Δ(l) / Σ Δ (seeds whose total gain is positive), or None."""
    rows = [[d / sum(ds) for d in ds] for ds in deltas.values() if ds and sum(ds) > 0]
    return [sum(col) / len(rows) for col in zip(*rows)] if rows else None


def _panel(ax: Any, record: dict[str, Any]) -> None:
    top = record["layers"] - 1
    scale = max(top, 1)
    shares = _shares(record["deltas"])
    if shares:
        ax.bar([l / scale for l in range(1, top + 1)], shares, width=0.6 / scale, alpha=0.5, label="Δ share")
    if record["weights"]:
        ax.plot([l / scale for l in range(top + 1)], record["weights"], marker="o", markersize=3, label="mix weight")
    for key, style in (("expected_layer", "-"), ("centre_of_gravity", "--")):
        value = record[key]["mean"]
        if value is not None:
            ax.axvline(value / scale, color="black", linestyle=style, linewidth=1,
                       label=f"{key.replace('_', ' ')} {value:.2f}")
    ax.set_xlim(-0.1, 1.1)
    ax.set_xlabel("relative depth l / L")


def edge_pipeline_figure(records: Sequence[dict[str, Any]], path: Path) -> bool:
    """False (nothing written) without edge-probing records."""
    if not records:
        return False
    encoders = list(dict.fromkeys(r["encoder"] for r in records))
    tasks = list(dict.fromkeys(r["task"] for r in records))
    fig, axes = plt.subplots(len(tasks), len(encoders), figsize=(3.6 * len(encoders), 2.4 * len(tasks)),
                             squeeze=False, layout="constrained")
    for i, task in enumerate(tasks):
        for j, encoder in enumerate(encoders):
            found = [r for r in records if r["task"] == task and r["encoder"] == encoder]
            if not found:
                axes[i][j].axis("off")
                continue
            _panel(axes[i][j], found[0])
            _small_panel(axes[i][j], f"{task}: {encoder}")
    _save(fig, path)
    return True
