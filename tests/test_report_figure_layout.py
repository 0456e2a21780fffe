"""Issue 36 item 6 ("while there"): every report figure is laid out without overlaps and every panel says what tells
it apart. Each figure is rendered from real record sets (the committed docs/results, and a two-encoder tree for the
probe-depth figure) on the Agg canvas; the window extents of every panel's text (title, axis labels, tick labels,
legend) must not overlap another panel's text or plot area, and no two panels may share a title."""
from __future__ import annotations

import json
import re
from itertools import combinations
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import Rectangle

from elmo_bench.commands.report import build_report
from elmo_bench.report import edge_figure, figures
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


def _drawn(fig: Any, renderer: Any = None) -> Any:
    """The renderer of ``fig``'s canvas after one draw (``renderer`` when the caller has drawn it already)."""
    if renderer is None:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
    return renderer


def _overlaps(fig: Any, renderer: Any = None) -> list[str]:
    renderer = _drawn(fig, renderer)
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


def _panels(fig: Any) -> list[Any]:
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison]


def _bars(ax: Any) -> list[Any]:
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_visible()]


def _data_lines(ax: Any) -> list[Any]:
    """Lines drawn in data coordinates (axhline / axvline span the axes and are left out)."""
    return [line for line in ax.get_lines() if line.get_visible() and line.get_transform() == ax.transData]


def _missing_labels(fig: Any) -> list[str]:
    """Panels without an x or y label (a y axis that two quantities share must say so)."""
    return [f"{ax.get_title()!r} has no {which} label" for ax in _panels(fig)
            for which, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())) if not label.strip()]


def _empty_panels(fig: Any) -> list[str]:
    """Panels with axes but nothing drawn, and legends without an entry."""
    found = [f"{ax.get_title()!r} draws nothing" for ax in _panels(fig)
             if not (_data_lines(ax) or _bars(ax) or ax.collections or ax.get_lines())]
    legends = [ax.get_legend() for ax in fig.axes] + list(fig.legends)
    return found + [f"an empty legend in {fig.axes.index(ax) if ax in fig.axes else 'the figure'}"
                    for ax, legend in zip([*fig.axes, *fig.legends], legends)
                    if legend is not None and legend.get_visible() and not any(t.get_text() for t in legend.get_texts())]


def _clipped_bars(fig: Any) -> list[str]:
    """Bars that the axes' view limits cut (a bar half outside reads as a shorter or narrower one)."""
    found = []
    for ax in _panels(fig):
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        tol = 1e-9 * max(x1 - x0, y1 - y0, 1.0)
        for bar in _bars(ax):
            box = bar.get_bbox()
            if box.xmin < x0 - tol or box.xmax > x1 + tol or box.ymin < y0 - tol or box.ymax > y1 + tol:
                found.append(f"{ax.get_title()!r}: a bar [{box.xmin:.3g}, {box.xmax:.3g}] × [{box.ymin:.3g}, "
                             f"{box.ymax:.3g}] is cut by the axes [{x0:.3g}, {x1:.3g}] × [{y0:.3g}, {y1:.3g}]")
    return found


def _covered_artists(fig: Any, renderer: Any) -> list[str]:
    """A panel's own legend over one of its bars or plotted points, and a figure legend over any panel."""
    found = []
    for ax in _panels(fig):
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        if any(box.overlaps(bar.get_window_extent(renderer)) for bar in _bars(ax)):
            found.append(f"{ax.get_title()!r}: the legend covers a bar")
        points = [xy for line in _data_lines(ax) for xy in ax.transData.transform(line.get_xydata())]
        if any(box.contains(x, y) for x, y in points):
            found.append(f"{ax.get_title()!r}: the legend covers a plotted point")
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        found += [f"the figure legend overlaps {ax.get_title()!r}" for ax in fig.axes if ax.get_visible()
                  and box.overlaps(ax.get_tightbbox(renderer))]
    return found


def _alike_series(fig: Any) -> list[str]:
    """Series of one panel drawn alike (colour, line style, marker), or without a legend entry to name them."""
    named = {t.get_text() for legend in [*(ax.get_legend() for ax in fig.axes), *fig.legends] if legend is not None
             for t in legend.get_texts()}
    found = []
    for ax in _panels(fig):
        seen: dict[tuple, str] = {}
        for line in _data_lines(ax):
            label = line.get_label()
            if label.startswith("_"):
                continue
            style = (to_hex(line.get_color()), str(line.get_linestyle()), str(line.get_marker()))
            if style in seen and seen[style] != label:
                found.append(f"{ax.get_title()!r}: {seen[style]!r} and {label!r} are drawn alike {style}")
            seen.setdefault(style, label)
            if label not in named:
                found.append(f"{ax.get_title()!r}: {label!r} is in no legend")
    return found


#: a panel title that is a config diff (issue 56: "ud_ewt_edge_dep, lr_plateau_factor=None, ..."), not words
CONFIG_DIFF = re.compile(r"=|->|[{}]|\"|': ")
#: a label that names an encoder only by the identity's hash (EncoderNames' last resort, "bert-tiny [1a2b3c4d]")
HASH_ONLY = re.compile(r"\[[0-9a-f]{8}\]")


def _empty_slots(fig: Any) -> list[str]:
    """Grid slots that hold nothing: hidden axes without a sentence or a legend (issue 56: blank slots beside a
    text-only panel)."""
    return [f"slot {i} of the grid is empty" for i, ax in enumerate(fig.axes) if ax.get_visible() and not ax.axison
            and not any(t.get_text().strip() for t in ax.texts) and ax.get_legend() is None]


def _slot_legends_over_panels(fig: Any, renderer: Any) -> list[str]:
    """A legend placed in the grid's spare slots must stay inside them: it may cover no panel."""
    legends = [ax.get_legend() for ax in fig.axes if not ax.axison and ax.get_legend() is not None]
    return [f"the legend in a spare slot overlaps {ax.get_title()!r}" for legend in legends for ax in _panels(fig)
            if legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))]


def _words(fig: Any) -> list[str]:
    """Panel titles that are config diffs, and titles or legend entries naming an encoder by its hash alone."""
    titles = [ax.get_title() for ax in _panels(fig)]
    entries = [t.get_text() for legend in [*(ax.get_legend() for ax in fig.axes), *fig.legends] if legend is not None
               for t in legend.get_texts()]
    return ([f"the title {t!r} is a config diff" for t in titles if CONFIG_DIFF.search(t)]
            + [f"{t!r} names an encoder by its hash" for t in titles + entries if HASH_ONLY.search(t)])


def _sparse_drawing(fig: Any) -> list[str]:
    """A panel of single points only (issue 56: one dot on a whole axis), and a line joining two depths across a
    depth where its encoder (its colour) has a point: a layer it never probed, drawn as if measured."""
    found = []
    for ax in _panels(fig):
        lines = _data_lines(ax)
        if lines and not _bars(ax) and all(len(line.get_xdata()) <= 1 for line in lines):
            found.append(f"{ax.get_title()!r} draws single points only")
        depths: dict[str, set[float]] = {}
        for line in lines:
            depths.setdefault(to_hex(line.get_color()), set()).update(float(x) for x in line.get_xdata())
        for line in lines:
            xs = sorted(float(x) for x in line.get_xdata())
            if str(line.get_linestyle()) in ("None", "none", ""):
                continue
            skipped = [x for a, b in zip(xs, xs[1:]) for x in depths[to_hex(line.get_color())] if a + 1e-9 < x < b - 1e-9]
            if skipped:
                found.append(f"{ax.get_title()!r}: {line.get_label()!r} is drawn across depth {skipped[0]:.3g}, "
                             "which it never probed")
    return found


def layout_problems(fig: Any, renderer: Any = None) -> list[str]:
    """Everything the issue-45 figure check refuses, beyond overlapping panel text (``_overlaps``), and issue 56's:
    no empty grid slot, titles and labels in words, no single-point panel, no line across an unprobed layer."""
    renderer = _drawn(fig, renderer)
    return (_missing_labels(fig) + _empty_panels(fig) + _clipped_bars(fig) + _covered_artists(fig, renderer)
            + _alike_series(fig) + _empty_slots(fig) + _slot_legends_over_panels(fig, renderer) + _words(fig)
            + _sparse_drawing(fig))


def _facts(fig: Any) -> dict[str, Any]:
    """What a figure says beyond its layout: each panel's reference lines (axhline: (y, label)) and y span, its
    caption (the suptitle) and every legend entry."""
    panels = _panels(fig)
    legends = [*(ax.get_legend() for ax in fig.axes), *fig.legends]
    return {"references": {ax.get_title(): [(float(line.get_ydata()[0]), line.get_label()) for line in ax.get_lines()
                                            if line.get_transform() != ax.transData] for ax in panels},
            "spans": {ax.get_title(): abs(ax.get_ylim()[1] - ax.get_ylim()[0]) for ax in panels},
            "caption": " ".join(fig._suptitle.get_text().split()) if fig._suptitle is not None else "",  # unwrapped
            "legend": [t.get_text() for legend in legends if legend is not None for t in legend.get_texts()]}


@pytest.fixture
def drawn(monkeypatch):
    """Every figure a report draws: "<out dir>/<file>" → (overlaps, panel titles, layout problems), measured on one
    draw of its canvas in place of the save (the edge figure imports ``_save`` itself: patched there too). The PNG
    is not written: its bytes are the committed report's test (test_report_encoders), its layout this one's."""
    seen: dict[str, tuple[list[str], list[str], list[str], dict[str, Any]]] = {}

    def measuring_save(fig, path: Path) -> None:
        titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.axison]
        renderer = _drawn(fig)
        seen[f"{Path(path).parent.name}/{Path(path).name}"] = (_overlaps(fig, renderer), titles,
                                                               layout_problems(fig, renderer), _facts(fig))
        plt.close(fig)

    monkeypatch.setattr(figures, "_save", measuring_save)
    monkeypatch.setattr(edge_figure, "_save", measuring_save)
    return seen


def _edge_tree_without_a_full_mix(root: Path) -> None:
    """Two edge tasks of the biLM; one of them has no full-mix run (mix=learned): a panel with nothing to draw."""
    from tests.test_edge_report import edge
    from tests.test_report_golden import write

    for task in ("edge_ner", "edge_pos"):
        for k, dev in enumerate((70.0, 84.0, 83.0)):
            write(root, f"{task}/l{k}", {**edge(1, "layer", k, dev, dev - 1), "task": task})
    write(root, "edge_ner/c1", {**edge(1, "cumulative", 1, 82.0, 81.0), "task": "edge_ner"})
    write(root, "edge_ner/full", {**edge(1, "learned", None, 86.0, 85.0, [0.1, 0.6, 0.3]), "task": "edge_ner"})


def test_every_report_figure_has_no_overlapping_text_and_distinct_panel_titles(drawn, tmp_path):
    from tests.test_report_bits_erasure import make_tree as make_bits_tree  # it imports this module's checks

    build_report([str(REPO / "docs" / "results")], tmp_path / "committed", "json", significance=False)
    make_encoders_tree(tmp_path / "encoders")
    _variants_of_one_model(tmp_path / "encoders")
    several = build_report([str(tmp_path / "encoders")], tmp_path / "several", "json", significance=False)
    _edge_tree_without_a_full_mix(tmp_path / "edge")
    build_report([str(tmp_path / "edge")], tmp_path / "edge_missing", "json", significance=False)
    make_bits_tree(tmp_path / "bits")
    build_report([str(tmp_path / "bits")], tmp_path / "bits_out", "json", significance=False)
    assert {"committed/figure1_sample_efficiency.png", "committed/figure2_layer_weights.png",
            "committed/dev_curves.png", "committed/probe_selectivity.png", "committed/edge_pipeline.png",
            "committed/structural_mdl_depth.png", "several/probe_depth.png",
            "edge_missing/edge_pipeline.png", "bits_out/bits_beyond_baseline_depth.png"} <= set(drawn)
    for name, (overlaps, titles, _, _) in drawn.items():
        assert overlaps == [], (name, overlaps)
        assert len(set(titles)) == len(titles), (name, titles)
    _, titles, _, _ = drawn["committed/figure2_layer_weights.png"]    # Figure 2's panels say which runs they show
    assert "ner: conll2003 (0.1 of train)\ninput mix, 3 seeds" in titles
    assert "srl: conll2005 (0.01 of train)\ninput mix, 3 seeds" in titles
    # issue 45: axis labels, no empty panel or legend, no bar cut or covered, every series told apart and named;
    # issue 56: no empty grid slot, titles and labels in words, no one-dot panel, no line across unprobed layers
    for name, (_, _, problems, _) in drawn.items():
        assert problems == [], (name, problems)
    _check_issue56(drawn, json.loads(several.read_text()))


def _variants_of_one_model(root: Path) -> None:
    """bert-tiny's probes again in bfloat16, and with a random-control eraser inside: three encoders one label apart,
    which only the identity's hash told apart (issue 56)."""
    from tests.test_report_encoders import BERT, probe_records
    from tests.test_report_golden import write

    erase = {"concept": "upos", "layer": 2, "control": "random", "seed": 2, "eraser": "0123456789abcdef"}
    for name, encoder in (("bf16", {**BERT, "dtype": "bfloat16", "precision": "bf16"}),
                          ("random_control", {**BERT, "erase": erase})):
        wsd, pos = probe_records(encoder, [54.0, 61.0, 69.0, 70.0, 63.0])
        write(root, f"probe_wsd/{name}", wsd)
        write(root, f"probe_pos/{name}", pos)


def _check_issue56(drawn: dict[str, Any], several: dict[str, Any]) -> None:
    """The committed edge figure: a row per task, titles in words, the row it cannot draw named in its caption, no
    y axis spanning less than 0.5; the probe-depth figure: Table 6's most-frequent-tag baseline as a labelled line;
    the selectivity figure: MLP-2's single layer beside MLP-1, not a panel of its own; labels in words."""
    _, titles, _, facts = drawn["committed/edge_pipeline.png"]
    assert len(titles) == 18 and all(t.count("\n") == 3 for t in titles)          # 6 tasks × 3 encoders
    assert "edge_dep: ELMo (biLM 730677ca)\nud_ewt_edge_dep, no LR plateau schedule\n" in "".join(
        t[:t.index("full")] for t in titles)
    assert ("not drawn: edge_dep: ELMo (biLM 730677ca), ud_ewt_edge_dep, LR ×0.5 on a plateau (patience 5): no "
            "full-mix run (mix=learned)") in facts["caption"] and "span at least 0.5" in facts["caption"]
    assert min(facts["spans"].values()) >= 0.5                 # ELMo's coref weights (0.331-0.338) on 0..0.5
    _, _, _, facts = drawn["edge_missing/edge_pipeline.png"]    # edge_pos has no full-mix run: named, not a slot
    assert "not drawn: edge_pos: ELMo (biLM 730677ca), conll2003_edge: no full-mix run" in facts["caption"]
    table = [row for row in several["tables"]["table6"]["rows"] if row["Data"] == "ud_ewt_pos, converged probe"]
    baseline = {float(row["most frequent tag"]) for row in table}
    _, _, _, facts = drawn["several/probe_depth.png"]
    [(y, label)] = facts["references"]["POS (converged probe): ud_ewt_pos"]
    assert baseline == {y} and label == "baseline: most frequent tag, ud_ewt_pos: 75.00" and label in facts["legend"]
    assert {"bert-tiny", "bert-tiny (bfloat16 weights)", "bert-tiny (random control for UPOS at layer 2, seed 2)"
            } <= set(facts["legend"])
    _, titles, _, facts = drawn["committed/probe_selectivity.png"]
    assert titles == ["POS accuracy: linear probe", "POS accuracy: MLP-1 probe (lines), MLP-2 probe (stars)",
                      "POS selectivity: linear probe", "POS selectivity: MLP-1 probe (lines), MLP-2 probe (stars)"]
    assert "ELMo (biLM 730677ca), trained, MLP-2 probe" in facts["legend"]
