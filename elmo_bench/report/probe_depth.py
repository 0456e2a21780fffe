"""Probe accuracy by relative layer depth, one line per encoder (as in Liu et al. 2019 and Tenney et al. 2019): the
data behind ``probe_depth.png`` and its table.

Relative depth of layer k of an encoder with L layers is k / (L - 1) (0 = the token / embedding layer, 1 = the top),
so a 3-layer biLM and a 13-layer BERT share one x axis. L is the layer count the run recorded (results.json
``encoder.layers``, else ``bilm.layers``; an encoder that kept some of a model's layers, ``encoder_layer_indices``
0, 4, 8, ..., names them by number: its deepest + 1), else the deepest layer scored + 1. The panels are the probes'
(each paper-place section's ``depth``, elmo_bench.report.sections: the POS probes per data set, the WSD probe on
``ALL``). Only when the probe runs come from several encoders (EncoderNames.several) is there anything to draw: with
the biLM alone the report is unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.sections import NO_PLUGINS, PAPER, DepthPanel, ReportPlugins
from elmo_bench.report.table import Stat, Table, fmt, fmt_stat, stat, stat_json


@dataclass
class DepthPoint:
    layer: int
    layers: int
    value: Stat

    @property
    def depth(self) -> float:
        return self.layer / (self.layers - 1) if self.layers > 1 else 0.0


Panel = tuple[str, str]     # (probe, data or WSD set)


def _panels(runs: Sequence[Run], plugins: ReportPlugins) -> tuple[list[Run], dict[Panel, DepthPanel]]:
    """(the probe runs the depth figure considers, in the order found; its panels by (probe, data))."""
    considered: set[int] = set()
    panels: dict[Panel, DepthPanel] = {}
    for section in plugins.placed(PAPER):
        if section.depth is None:
            continue
        mine, found = section.depth(runs)
        considered |= {id(r) for r in mine}
        panels.update({(p.probe, p.data): p for p in found})
    return [r for r in runs if id(r) in considered], panels


def probe_depth_curves(runs: Sequence[Run], names: EncoderNames | None = None, plugins: ReportPlugins = NO_PLUGINS
                       ) -> dict[Panel, dict[str, list[DepthPoint]]]:
    """{(probe, data): {encoder label: points in layer order (mean over the encoder's runs)}}; {} unless the probe
    runs come from several encoders, or from one that is not a biLM."""
    probes, panels = _panels(runs, plugins)
    names = names or EncoderNames(probes)
    if not names.several(probes):
        return {}
    out: dict[Panel, dict[str, list[DepthPoint]]] = {}
    for panel, found in sorted(panels.items(), key=lambda item: item[0]):
        for key, group in names.split(found.runs):
            by_layer: dict[int, list[float]] = {}
            for run in group:
                for layer, value in found.values(run).items():
                    by_layer.setdefault(layer, []).append(value)
            if not by_layer:
                continue
            layers = names.spans.get(key) or max(by_layer) + 1
            out.setdefault(panel, {})[names.label(key)] = [DepthPoint(k, layers, stat(by_layer[k]))
                                                            for k in sorted(by_layer)]
    return out


def floors(runs: Sequence[Run], plugins: ReportPlugins = NO_PLUGINS) -> dict[Panel, list[float]]:
    """Per panel with a ``floor`` (the converged POS probe's most-frequent-tag test accuracy, Table 6's), each
    distinct value its runs recorded: the line a layer must clear to have learnt anything beyond it."""
    out: dict[Panel, list[float]] = {}
    for panel, found in _panels(runs, plugins)[1].items():
        floor = found.floor
        values = sorted({v for r in found.runs if floor is not None and (v := floor(r)) is not None})
        if values:
            out[panel] = values
    return out


def metrics(runs: Sequence[Run], plugins: ReportPlugins = NO_PLUGINS) -> dict[Panel, str]:
    """Each panel's y axis (its section's ``metric``)."""
    return {panel: found.metric for panel, found in _panels(runs, plugins)[1].items()}


def probe_depth_table(runs: Sequence[Run], names: EncoderNames | None = None, plugins: ReportPlugins = NO_PLUGINS
                      ) -> Table:
    """The points of ``probe_depth.png``: one row per (probe, data, encoder, layer)."""
    rows, records = [], []
    for (probe, data), lines in probe_depth_curves(runs, names, plugins).items():
        for label, points in lines.items():
            for p in points:
                rows.append([probe, data, label, str(p.layer), fmt(p.depth, 3), fmt_stat(p.value), str(p.value.n)])
                records.append({"probe": probe, "data": data, "encoder": label, "layer": p.layer,
                                "layers": p.layers, "depth": p.depth, "value": stat_json(p.value)})
    return Table("Probe accuracy by relative layer depth", ["Probe", "Data", "Encoder", "Layer", "Relative depth",
                                                              "Metric", "n"], rows,
                 ["Relative depth = layer / (layers − 1): 0 is the token (embedding) layer, 1 the top layer of each "
                  "encoder; POS: test accuracy, WSD: F1; mean ± std over runs (as Liu et al. 2019, Tenney et al. "
                  "2019)."], key="probe_depth", records=records)
