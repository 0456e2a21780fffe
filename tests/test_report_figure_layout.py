"""Issue 36 item 6 ("while there"): every report figure is laid out without overlaps and every panel says what tells
it apart. Each figure is rendered from real record sets (the committed docs/results, and a two-encoder tree for the
probe-depth figure) on the Agg canvas; the window extents of every panel's text (title, axis labels, tick labels,
legend) must not overlap another panel's text or plot area, and no two panels may share a title."""
from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from elmo_bench.report import figures
from elmo_bench.report.cli import build_report
from tests.conftest import REPO
from tests.test_report_encoders import make_tree as make_encoders_tree


def _drawn_tick_labels(axis: Any, limits: tuple[float, float]) -> list[Any]:
    """The tick labels matplotlib draws: those of ticks inside the view limits (a locator also returns ticks just
    outside them, which are never drawn)."""
    low, high = sorted(limits)
    span = (high - low) * 1e-9
    return [label for tick in axis.get_major_ticks() + axis.get_minor_ticks()
            if low - span <= tick.get_loc() <= high + span
            for label in (tick.label1, tick.label2) if label.get_visible()]


def _panel_boxes(ax: Any, renderer: Any) -> tuple[list[tuple[str, Any]], Any]:
    """(what, window extent) of every visible, non-empty text of one panel, and the panel's plot area."""
    texts = [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label,
             *_drawn_tick_labels(ax.xaxis, ax.get_xlim()), *_drawn_tick_labels(ax.yaxis, ax.get_ylim())]
    boxes = [(f"{type(t).__name__} {t.get_text()!r}", t.get_window_extent(renderer)) for t in texts
             if t.get_visible() and t.get_text().strip()]
    legend = ax.get_legend()
    if legend is not None and legend.get_visible():
        boxes.append(("legend", legend.get_window_extent(renderer)))
    return boxes, ax.get_window_extent(renderer)


def _overlaps(fig: Any) -> list[str]:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    found = []
    measured = [(ax, *_panel_boxes(ax, renderer)) for ax in panels]
    for (a, texts_a, area_a), (b, texts_b, area_b) in combinations(measured, 2):
        for name_a, box_a in texts_a + [("plot area", area_a)]:
            for name_b, box_b in texts_b + [("plot area", area_b)]:
                if name_a == name_b == "plot area":
                    continue
                if box_a.overlaps(box_b):
                    found.append(f"{a.get_title()!r} {name_a} overlaps {b.get_title()!r} {name_b}")
    return found


@pytest.fixture
def drawn(monkeypatch):
    """Every figure a report draws: "<out dir>/<file>" → (overlaps, panel titles), measured before it is saved."""
    seen: dict[str, tuple[list[str], list[str]]] = {}
    save = figures._save

    def measuring_save(fig, path: Path) -> None:
        titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.axison]
        seen[f"{Path(path).parent.name}/{Path(path).name}"] = (_overlaps(fig), titles)
        save(fig, path)

    monkeypatch.setattr(figures, "_save", measuring_save)
    return seen


def test_every_report_figure_has_no_overlapping_text_and_distinct_panel_titles(drawn, tmp_path):
    build_report([str(REPO / "docs" / "results")], tmp_path / "committed", "json", significance=False)
    make_encoders_tree(tmp_path / "encoders")
    build_report([str(tmp_path / "encoders")], tmp_path / "several", "json", significance=False)
    assert {"committed/figure1_sample_efficiency.png", "committed/figure2_layer_weights.png",
            "committed/dev_curves.png", "several/probe_depth.png"} <= set(drawn)
    for name, (overlaps, titles) in drawn.items():
        assert overlaps == [], (name, overlaps)
        assert len(set(titles)) == len(titles), (name, titles)
    _, titles = drawn["committed/figure2_layer_weights.png"]          # Figure 2's panels say which runs they show
    assert "ner: conll2003 (0.1 of train)\ninput mix, 3 seeds" in titles
    assert "srl: conll2005 (0.01 of train)\ninput mix, 3 seeds" in titles
