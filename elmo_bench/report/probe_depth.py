"""Probe accuracy by relative layer depth, one line per encoder (as in Liu et al. 2019 and Tenney et al. 2019): the
data behind ``probe_depth.png`` and its table.

Relative depth of layer k of an encoder with L layers is k / (L - 1) (0 = the token / embedding layer, 1 = the top),
so a 3-layer biLM and a 13-layer BERT share one x axis. L is the layer count the run recorded (results.json
``encoder.layers``, else ``bilm.layers``; an encoder that kept some of a model's layers, ``encoder_layer_indices``
0, 4, 8, ..., names them by number: its deepest + 1), else the deepest layer scored + 1. Panels: the converged POS probe
(``pos_probe``, test accuracy) and the engine-trained POS probe (``pos`` runs with ``mix=layer``, test accuracy) per
data set, and the WSD probe (F1 on the ``ALL`` set; every set when no run has ``ALL``). Only when the probe runs come
from several encoders (EncoderNames.several) is there anything to draw: with the biLM alone the report is unchanged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.tables import Stat, Table, _pos_probe_label, fmt, fmt_stat, stat, stat_json

POS_CONVERGED = "POS (converged probe)"
POS_ENGINE = "POS (engine-trained probe)"
WSD = "WSD"


@dataclass
class DepthPoint:
    layer: int
    layers: int
    value: Stat

    @property
    def depth(self) -> float:
        return self.layer / (self.layers - 1) if self.layers > 1 else 0.0


Panel = tuple[str, str]     # (probe, data or WSD set)


def _values(run: Run, panel: Panel) -> dict[int, float]:
    """{layer: score} of one probe run in one panel."""
    probe, where = panel
    if probe == POS_ENGINE:
        value = run.value("test")
        return {} if value is None or run.mode != "layer" or run.layer_index is None else {run.layer_index: value}
    scores = (run.metrics.get("test") if probe == POS_CONVERGED else run.metrics.get(where)) or {}
    pattern = r"layer_(\d+)_accuracy" if probe == POS_CONVERGED else r"layer_(\d+)_f1"
    return {int(m.group(1)): float(v) for k, v in scores.items()
            if (m := re.fullmatch(pattern, k)) and isinstance(v, (int, float))}


def _panels(runs: Sequence[Run]) -> dict[Panel, list[Run]]:
    out: dict[Panel, list[Run]] = {}
    for run in runs:
        if run.task == "pos_probe":
            out.setdefault((POS_CONVERGED, _pos_probe_label(run)), []).append(run)
        elif run.task == "pos" and run.has_elmo and run.fraction == 1.0 and run.mode == "layer":
            out.setdefault((POS_ENGINE, run.data), []).append(run)
    wsd = [r for r in runs if r.task == "wsd"]
    sets = sorted({s for r in wsd for s, m in r.metrics.items() if isinstance(m, dict)})
    chosen = [s for s in sets if s.lower() == "all"] or sets
    for name in chosen:
        out[(WSD, name)] = [r for r in wsd if name in r.metrics]
    return out


def probe_runs(runs: Iterable[Run]) -> list[Run]:
    return [r for r in runs if r.task in ("pos_probe", "wsd") or (r.task == "pos" and r.has_elmo)]


def probe_depth_curves(runs: Sequence[Run], names: EncoderNames | None = None
                       ) -> dict[Panel, dict[str, list[DepthPoint]]]:
    """{(probe, data): {encoder label: points in layer order (mean over the encoder's runs)}}; {} unless the probe
    runs come from several encoders, or from one that is not a biLM."""
    probes = probe_runs(runs)
    names = names or EncoderNames(probes)
    if not names.several(probes):
        return {}
    out: dict[Panel, dict[str, list[DepthPoint]]] = {}
    for panel, members in sorted(_panels(probes).items()):
        for key, group in names.split(members):
            by_layer: dict[int, list[float]] = {}
            for run in group:
                for layer, value in _values(run, panel).items():
                    by_layer.setdefault(layer, []).append(value)
            if not by_layer:
                continue
            layers = names.spans.get(key) or max(by_layer) + 1
            out.setdefault(panel, {})[names.label(key)] = [DepthPoint(k, layers, stat(by_layer[k]))
                                                            for k in sorted(by_layer)]
    return out


def most_frequent_tag(runs: Sequence[Run]) -> dict[Panel, list[float]]:
    """Per converged-POS panel, the most-frequent-tag test accuracy Table 6 shows beside that data (each distinct
    value its runs recorded): the line a layer must clear to have learnt anything beyond the word's own tag."""
    out: dict[Panel, list[float]] = {}
    for panel, members in _panels(probe_runs(runs)).items():
        values = sorted({float(v) for r in members if panel[0] == POS_CONVERGED and isinstance(
            v := (r.metrics.get("test") or {}).get("most_frequent_tag_accuracy"), (int, float))})
        if values:
            out[panel] = values
    return out


def probe_depth_table(runs: Sequence[Run], names: EncoderNames | None = None) -> Table:
    """The points of ``probe_depth.png``: one row per (probe, data, encoder, layer)."""
    rows, records = [], []
    for (probe, data), lines in probe_depth_curves(runs, names).items():
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
