"""Probe wsd's part of the report: Table 5 (F1 per layer per Raganato evaluation set, beside the paper's), its panel
of the probe-depth figure (F1 on ``ALL``; every set when no run has ``ALL``) and its Directions row (layer 2 above
layer 1). Declared by config.py (``report``); the report's framework (elmo_bench.report.sections) renders it."""
from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.directions import above, probe_layers, seed_counts
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.sections import PAPER, DepthPanel, Rendered, Section, SectionInput
from elmo_bench.report.selection import layer_title
from elmo_bench.report.table import ENCODER_BLOCKS_NOTE, MISSING, Table, _mean, fmt, stat

#: the record task of probe wsd's results.json (its declaration's ``record_task``)
WSD_TASK = "wsd"
WSD_SET_ORDER = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "all")
#: the probe-depth figure's panel name
WSD = "WSD"
#: the paper's Table 5 (Peters et al. 2018; all-words fine-grained WSD F1, Raganato et al. 2017 framework): biLM
#: first / second biLSTM layer, our layers 1 and 2 (layer 0 = the context-free token layer); shown as "paper"
TABLE5_BILM: dict[int, float] = {1: 67.4, 2: 69.0}
TABLE5_WORDNET_FIRST_SENSE = 65.9
#: Table 5's other rows (F1 on ALL): CoVe's first / second layer in our numbering, and the supervised systems
TABLE5_COVE: dict[int, float] = {1: 59.4, 2: 64.7}
TABLE5_OTHERS: dict[str, float] = {"Raganato et al. (2017a)": 69.9, "Iacobacci et al. (2016)": 70.1}


def _layer_columns(found: Iterable[str]) -> list[str]:
    keys = set(found)
    layers = sorted({k for k in keys if re.fullmatch(r"layer_\d+_f1", k)}, key=lambda k: int(k.split("_")[1]))
    others = sorted({k for k in keys if k.endswith("_f1")} - set(layers))
    return layers + others


def _set_order(name: str) -> tuple[int, str]:
    low = name.lower()
    return (WSD_SET_ORDER.index(low) if low in WSD_SET_ORDER else len(WSD_SET_ORDER), low)


def _coverage(wsd: Sequence[Run], name: str, view: str) -> str:
    """"answered/total" of a view on one set (from the first run that records it)."""
    for r in wsd:
        found = ((r.record.data.get("coverage") or {}).get(name) or {}).get(view)
        if found:
            return f"{found[0]}/{found[1]}"
    return MISSING


def _wsd_size(run: Run) -> int:
    """The SemCor sentences a WSD probe run trained on (0: not recorded)."""
    found = run.record.data.get("train_sentences")
    return int(found) if isinstance(found, (int, float)) and not isinstance(found, bool) else 0


def _table5_rows(wsd: Sequence[Run], columns: Sequence[str]) -> list[list[str]]:
    """One row per evaluation set of these WSD runs: F1 per column (mean over runs), coverage, n. Runs of different
    training sizes are never averaged (issue 45): each size is its own rows, the set labelled with it."""
    sizes = sorted({_wsd_size(r) for r in wsd})
    rows = []
    for size in sizes:
        sized = [r for r in wsd if _wsd_size(r) == size]
        sets = sorted({s for r in sized for s, m in r.metrics.items() if isinstance(m, dict)}, key=_set_order)
        label = f" ({size} train sentences)" if len(sizes) > 1 and size else ""
        for name in sets:
            values = [stat((r.metrics.get(name) or {}).get(c) for r in sized) for c in columns]
            n = max((v.n for v in values if v), default=0)
            rows.append([name + label, *[fmt(_mean(v)) for v in values], _coverage(sized, name, "layer_0"),
                         _coverage(sized, name, "wordnet_first_sense"), str(n)])
    return rows


def table5(runs: Sequence[Run], names: EncoderNames | None = None) -> Table:
    """WSD F1 per layer per evaluation set; with several encoders an Encoder column first and one row block per
    encoder (its layers' columns; the paper's rows last, Encoder "paper")."""
    wsd = [r for r in runs if r.task == WSD_TASK]
    names = names or EncoderNames(wsd)
    several = names.several(wsd)
    columns = _layer_columns(k for r in wsd for m in r.metrics.values() if isinstance(m, dict) for k in m)
    if not columns:
        columns = [f"layer_{k}_f1" for k in (0, 1, 2)] + ["average_f1"]
    if several:
        rows = [[names.label(key), *row] for key, group in names.split(wsd) for row in _table5_rows(group, columns)]
    else:
        rows = _table5_rows(wsd, columns)

    def paper_row(label: str, by_column: dict[str, float]) -> list[str]:
        return [*(["paper"] if several else []), label,
                *[fmt(by_column.get(c), 1) if c in by_column else MISSING for c in columns], MISSING, MISSING, MISSING]

    rows.append(paper_row("paper biLM (ALL)", {f"layer_{k}_f1": v for k, v in TABLE5_BILM.items()}))
    rows.append(paper_row("paper CoVe (ALL)", {f"layer_{k}_f1": v for k, v in TABLE5_COVE.items()}))
    rows.append(paper_row("paper WordNet first sense (ALL)",
                          {"wordnet_first_sense_f1": TABLE5_WORDNET_FIRST_SENSE}))
    labels = [c[: -len("_f1")].replace("_", " ") for c in columns]
    others = "; ".join(f"{name} {value:.1f}" for name, value in TABLE5_OTHERS.items())
    notes = ["F1 (Raganato et al. 2017 scorer semantics), 1-nearest-neighbour sense centroid per layer; layer 0 is "
             "the context-free token layer, the paper's (and CoVe's) first and second biLSTM layers are our layers "
             "1 and 2. A lemma without SemCor senses falls back to its SemCor most frequent sense, then to "
             "WordNet's first sense.",
             "mfs: SemCor's most frequent sense (then WordNet's first sense); wordnet first sense: WordNet's first "
             "sense alone. Coverage: instances answered / instances, for the layer views and for WordNet alone.",
             f"Paper, supervised systems on ALL: {others}."]
    if several:
        notes.append(ENCODER_BLOCKS_NOTE)
    header = [*(["Encoder"] if several else []), "Set", *labels, "coverage (layers)", "coverage (WordNet)", "n"]
    return Table(f"Table 5: WSD probe, F1 per {layer_title(names, wsd)}", header, rows, notes, key="table5")


def _all_set(run: Run) -> dict[str, Any] | None:
    return next((m for name, m in run.metrics.items() if name.lower() == "all" and isinstance(m, dict)), None)


def directions(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Table 5's direction: the second layer above the first on ALL."""
    layer1, layer2 = probe_layers(runs, WSD_TASK, _all_set, "layer_{}_f1")
    if not (layer1 and layer2):
        return []
    return [{"direction": "wsd_layer2_above_layer1", "scope": "WSD probe (ALL)",
             "ours": f"layer 1 {fmt(layer1.mean)}, layer 2 {fmt(layer2.mean)}",
             "paper": f"layer 1 {TABLE5_BILM[1]:.1f}, layer 2 {TABLE5_BILM[2]:.1f}",
             "holds": above(layer2, layer1), "n": seed_counts(layer1)}]


def _f1_by_layer(where: str):
    def values(run: Run) -> dict[int, float]:
        scores = run.metrics.get(where) or {}
        return {int(m.group(1)): float(v) for k, v in scores.items()
                if (m := re.fullmatch(r"layer_(\d+)_f1", k)) and isinstance(v, (int, float))}
    return values


def depth(runs: Sequence[Run]) -> tuple[list[Run], list[DepthPanel]]:
    """The WSD runs and their probe-depth panel: ALL, or every set when no run has ALL."""
    wsd = [r for r in runs if r.task == WSD_TASK]
    sets = sorted({s for r in wsd for s, m in r.metrics.items() if isinstance(m, dict)})
    chosen = [s for s in sets if s.lower() == "all"] or sets
    return wsd, [DepthPanel(WSD, name, [r for r in wsd if name in r.metrics], _f1_by_layer(name), "F1")
                 for name in chosen]


def render(given: SectionInput) -> Rendered:
    return Rendered([table5(given.runs, given.names)])


SECTION = Section(key="table5", place=PAPER, order=5, render=render, depth=depth, directions=directions,
                  direction_order=6, minimal_records=True)
