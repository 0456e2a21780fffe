"""Probe neighbours's part of the report, declared by config.py (``report``): the paper's Table 4 (section 5.3) made
measurable. One table of sense agreement@k per encoder (and experiment): each layer's, the layers' ``average``'s and
GloVe's, each with its bootstrap 95% interval, beside the sense prior (what a view that cannot separate senses
scores) and the most-frequent-sense rate; then, per encoder, the paper-style rows the run printed (its record's
``printed.table4``: a query context → its nearest other context, with both senses) and GloVe's nearest word types."""
from __future__ import annotations

import re
from typing import Any, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames
from elmo_bench.report.experiments import apart
from elmo_bench.report.sections import Rendered, Section, SectionInput
from elmo_bench.report.table import MISSING, Table, fmt

LAYER = re.compile(r"layer_(\d+)_sense_agreement")
#: the record's key holding the printed object (elmo_bench.engine.probe_run.PRINTED: the engine is not imported here)
PRINTED = "printed"


def blocks(runs: Sequence[Run], record_task: str) -> list[tuple[str, list[Run]]]:
    """(label, runs) per encoder (report order) and experiment: records that differ in what they measured (k, the
    words, the contexts) are never averaged."""
    mine = [r for r in runs if r.task == record_task]
    names = EncoderNames(mine)
    return [(names.label(key) + (f" ({words})" if words else ""), part)
            for key, group in names.split(mine) for words, part in apart(group) if part]


def mean(runs: Sequence[Run], metric: str) -> float | None:
    """``metrics.all.<metric>``, the mean over runs (None: no run records it)."""
    values = [v for r in runs if (v := r.value("all", metric)) is not None]
    return sum(values) / len(values) if values else None


def _cell(runs: Sequence[Run], view: str) -> tuple[str, dict[str, float | None]]:
    """A view's agreement (4 decimals) with its interval, and its report.json numbers."""
    found = {part: mean(runs, f"{view}_sense_agreement{suffix}")
             for part, suffix in (("mean", ""), ("lo", "_lo"), ("hi", "_hi"))}
    if found["mean"] is None:
        return MISSING, found
    text = fmt(found["mean"], 4)
    if found["lo"] is not None and found["hi"] is not None:
        text += f" [{fmt(found['lo'], 4)}, {fmt(found['hi'], 4)}]"
    return text, found


def _settings(runs: Sequence[Run], key: str) -> str:
    found = sorted({str(((r.record.extra.get("probe") or {}).get("settings") or {}).get(key)) for r in runs})
    return ", ".join(found) if found else MISSING


def agreement_table(found: Sequence[tuple[str, list[Run]]], probe: str) -> Table:
    """Rows: encoder; sense agreement@k per layer, average and GloVe [95% CI], sense prior, most frequent sense."""
    layers = sorted({int(m.group(1)) for _, runs in found for r in runs for key in (r.metrics.get("all") or {})
                     if (m := LAYER.fullmatch(key))})
    views = [f"layer_{k}" for k in layers] + ["average", "glove"]
    header = ["Encoder", *[v.replace("_", " ") if v != "glove" else "GloVe" for v in views], "sense prior",
              "most frequent sense", "k", "queries", "n"]
    rows: list[list[str]] = []
    records: list[dict[str, Any]] = []
    for label, runs in found:
        cells = [_cell(runs, view) for view in views]
        prior, mfs, queries = (mean(runs, m) for m in ("sense_prior", "most_frequent_sense", "queries"))
        rows.append([label, *[text for text, _ in cells], fmt(prior, 4), fmt(mfs, 4), _settings(runs, "k"),
                     fmt(queries, 0), str(len(runs))])
        records.append({"encoder": label, "runs": len(runs), "k": _settings(runs, "k"), "sense_prior": prior,
                        "most_frequent_sense": mfs, "queries": queries,
                        **{f"{view}_sense_agreement": numbers for view, (_, numbers) in zip(views, cells)}})
    notes = ["Sense agreement@k: the share of a SemCor context's k nearest other contexts of the same lemma and part "
             "of speech (cosine of the view's vectors) that carry its WordNet sense, over every context of the "
             "query words, with a bootstrap 95% interval over contexts; average: the mean of all layers; GloVe: "
             "the word's type vector, which cannot tell senses apart (its agreement is the sense prior). Sense "
             "prior: the share of the other contexts carrying the query's sense; most frequent sense: the share of "
             "contexts tagged with their lemma's commonest sense. n = runs (several: each number's mean)."]
    return Table(f"Probe {probe}: the paper's Table 4 measured, sense agreement@k", header, rows, notes, key=probe,
                 records=records)


def printed(run: Run) -> dict[str, Any]:
    """The object the run printed, as its record keeps it ({} in a record without it)."""
    found = run.record.extra.get(PRINTED)
    return found if isinstance(found, dict) else {}


def example_rows(found: Sequence[tuple[str, list[Run]]]) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """Per encoder (its first run: the rows are one run's, not a mean), GloVe's nearest word types per word, then
    each printed Table 4 row: query → nearest other context, both senses, cosine."""
    rows: list[list[str]] = []
    records: list[dict[str, Any]] = []
    for label, runs in found:
        shown = printed(runs[0])
        for word, near in sorted((shown.get("glove_neighbours") or {}).items()):
            types = ", ".join(str(n[0]) for n in near)
            rows.append([label, word, "GloVe word types", word, MISSING, types, MISSING, MISSING, MISSING])
            records.append({"encoder": label, "word": word, "view": "glove_types", "neighbours": types})
        for row in shown.get("table4") or []:
            view = "GloVe" if row["view"] == "glove" else str(row["view"]).replace("_", " ")
            rows.append([label, str(row["word"]), view, str(row["query"]), str(row["query_sense"]),
                         str(row["neighbour"]), str(row["neighbour_sense"]), fmt(row["cosine"], 4),
                         "yes" if row["same_sense"] else "no"])
            records.append({"encoder": label, **row})
    return rows, records


def examples_table(found: Sequence[tuple[str, list[Run]]], probe: str) -> Table:
    """The paper-style rows (Table 4 of Peters et al. 2018) as the runs printed them."""
    rows, records = example_rows(found)
    header = ["Encoder", "Word", "View", "Query", "Query sense", "Nearest neighbour", "Neighbour sense", "cosine",
              "same sense"]
    notes = ["As the paper's Table 4: for one query context per frequent sense of each word (the word in brackets), "
             "its nearest other SemCor context by cosine of each view, with both WordNet sense keys; GloVe word "
             "types: the word's nearest word types, across senses. One run per encoder (its printed rows)."]
    return Table(f"Probe {probe}: nearest neighbours (the paper's Table 4 rows)", header, rows, notes,
                 key=f"{probe}_examples", records=records)


def render(given: SectionInput) -> Rendered:
    found = blocks(given.runs, given.record_task)
    return Rendered([agreement_table(found, given.probe), examples_table(found, given.probe)])


SECTION = Section(order=8, render=render, summary="probe={probe} runs")
