"""The edge-probing table (issue 38): per encoder and edge task (``edge_*`` runs), the lexical and full F1 on test,
the gain, the best single layer, the expected layer and the centre of gravity (elmo_bench.report.edge_depth), and p
for full > lexical (paired bootstrap over the test sentences' statistics).

A run's mode is read from its record: ``layer`` k (k = 0: lexical), ``cumulative`` k, ``learned`` (the full mix,
= cumulative L). Per seed, the cumulative dev scores F(0..l), l = 0..L, are layer 0, cumulative 1..L-1 and the full
mix; the expected layer of a seed needs all of them. Values are mean ± sd over the seeds that have them. Without
edge runs there is no table (the report is unchanged).

An encoder that keeps some of a model's layers (``encoder.layers=every:4``, recorded as ``encoder_layer_indices``;
issue 46) is probed at those layers, and its runs name them by the model's number (mix.layer = 0, 4, 8, ...): the
lexical run is its first layer, the cumulative runs its prefixes, L its deepest layer, and the best layer, the
expected layer and the centre of gravity are layer numbers, never positions among the kept layers.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.edge_depth import centre_of_gravity, differential_scores, expected_layer
from elmo_bench.report.encoder_names import EncoderNames, kept_layers, last_layer, layer_count
from elmo_bench.report.selection import _data_label
from elmo_bench.report.table import MISSING, Table, fmt_stat, stat, stat_json
from elmo_bench.report.tables import _p_cell

PREFIX = "edge_"
HEADER = ["encoder", "task", "data", "L", "lexical", "full", "gain", "best layer", "expected layer",
          "centre of gravity", "p (full > lexical)"]


def edge_runs(runs: Sequence[Run]) -> list[Run]:
    """Every edge-probing run with encoder layers, a run on part of the training data included: its data is
    labelled with the fraction by edge_table, so it is its own row (issue 45: such runs were counted as used and
    shown nowhere)."""
    return [r for r in runs if r.task.startswith(PREFIX) and r.has_elmo]


def skipped_edge_runs(runs: Sequence[Run]) -> list[Run]:
    """Edge-probing runs without encoder layers (nothing to probe): counted as skipped, with the reason."""
    return [r for r in runs if r.task.startswith(PREFIX) and not r.has_elmo]


def without_edge(runs: Sequence[Run]) -> list[Run]:
    """The runs of every other table: edge-probing runs (``edge_*`` tasks) appear in their own table only."""
    return [r for r in runs if not r.task.startswith(PREFIX)]


def _by_seed(runs: Sequence[Run], mode: str, layer: int | None) -> dict[int, Run]:
    return {r.seed: r for r in runs if r.mode == mode and (layer is None or r.layer_index == layer)}


def _layers(group: Sequence[Run]) -> list[int]:
    """The model's numbers of the layers the group's encoder gives, in its order: the recorded
    ``encoder_layer_indices`` of a subset, else 0..L with L the deepest layer recorded or run."""
    kept = kept_layers(run.record for run in group)
    if kept is not None:
        return kept
    top = max([(layer_count(r.record) or 0) - 1 for r in group] + [r.layer_index or 0 for r in group])
    return list(range(top + 1))


def _consecutive(layers: Sequence[int]) -> bool:
    return list(layers) == list(range(len(layers)))


def _cumulative(runs: Sequence[Run], layers: Sequence[int], seed: int) -> list[float] | None:
    """[F(l_0..l_0), ..., F(l_0..l_n)] on dev for one seed (l_0 = 0, l_n = L for 0..L), or None when a prefix is
    missing."""
    lexical, full = _by_seed(runs, "layer", layers[0]).get(seed), _by_seed(runs, "learned", None).get(seed)
    middle = [_by_seed(runs, "cumulative", k).get(seed) for k in layers[1:-1]]
    found = [lexical, *middle, full]
    if any(r is None or r.value("dev") is None for r in found):
        return None
    return [float(r.value("dev")) for r in found]


def _full_weights(run: Run, layers: Sequence[int]) -> list[float] | None:
    """The full mix's weights; of a subset's mix only when there is one per kept layer (else: no layer numbers)."""
    mix = (run.mixes or {}).get("input") or next(iter((run.mixes or {}).values()), None)
    found = list(mix["weights"]) if isinstance(mix, dict) and mix.get("weights") else None
    return None if found is None or (not _consecutive(layers) and len(found) != len(layers)) else found


def _best_layer(runs: Sequence[Run], layers: Sequence[int], where: str, notes: list[str]) -> int | None:
    """The layer (its number) whose single-layer probe scores best on dev (ties: the lower), or None with a note
    saying why when some layer was never probed alone: with the lexical run only, "best layer 0" would be no
    finding."""
    single = {k: stat(r.value("dev") for r in _by_seed(runs, "layer", k).values()) for k in layers}
    scored = {k: s.mean for k, s in single.items() if s is not None}
    if len(scored) < len(layers):
        missing = ", ".join(str(k) for k in layers if k not in scored)
        span = f"0..{layers[-1]}" if _consecutive(layers) else "layers " + ", ".join(str(k) for k in layers)
        notes.append(f"{where}: best layer —: no single-layer run of layer {missing} (mix=layer mix.layer=k), so "
                     f"no layer can be called the best of {span}.")
        return None
    return min(scored, key=lambda k: (-scored[k], k))


def _row(label: str, task: str, data: str, runs: list[Run], layers: list[int], p_value: Any,
         notes: list[str]) -> tuple[list[str], dict[str, Any]]:
    """One table row and its report.json record; ``layers`` the model's numbers of the encoder's layers. A subset
    (not 0..L) adds ``layer_indices`` to the record: ``layers`` stays L + 1, L the model's last layer where recorded
    (``model_layers``: [0, 4, 8] of 13 is drawn at 0, 1/3, 2/3), else the deepest kept."""
    recorded = [last for run in runs if (last := last_layer(run.record)) is not None]
    top, numbers = max([max(layers), *recorded]), None if _consecutive(layers) else layers
    lexical, full = _by_seed(runs, "layer", layers[0]), _by_seed(runs, "learned", None)
    seeds = sorted(set(lexical) & set(full))
    lex = stat(lexical[s].value("test") for s in lexical)
    ful = stat(full[s].value("test") for s in full)
    gain = stat(full[s].value("test") - lexical[s].value("test") for s in seeds
                if full[s].value("test") is not None and lexical[s].value("test") is not None)
    best = _best_layer(runs, layers, f"{label} {task} ({data})", notes)
    curves = {s: c for s in sorted({r.seed for r in runs}) if (c := _cumulative(runs, layers, s)) is not None}
    after = None if numbers is None else numbers[1:]          # the layers Δ belongs to: all but the first
    expected = stat(expected_layer(differential_scores(c), after) for c in curves.values())
    weights = [w for r in full.values() if (w := _full_weights(r, layers)) is not None]
    gravity = stat(centre_of_gravity(w, numbers) for w in weights)
    p_text, p = _p_cell(p_value, [full[s] for s in seeds], [lexical[s] for s in seeds], f"{label} {task}", notes)
    cells = [label, task, data, str(top), fmt_stat(lex), fmt_stat(ful), fmt_stat(gain),
             MISSING if best is None else str(best), fmt_stat(expected), fmt_stat(gravity), p_text]
    record = {"encoder": label, "task": task, "data": data, "layers": top + 1, "lexical": stat_json(lex),
              "full": stat_json(ful), "gain": stat_json(gain), "best_layer": best,
              "expected_layer": stat_json(expected), "centre_of_gravity": stat_json(gravity), "p": p,
              "deltas": {str(s): differential_scores(c) for s, c in curves.items()},
              "weights": [sum(column) / len(weights) for column in zip(*weights)] if weights else None}
    if numbers is not None:
        record["layer_indices"] = list(numbers)
    return cells, record


def trainer(run: Run) -> dict[str, Any]:
    """The run's effective trainer settings (the task's, then the run's overrides), as its signature has them."""
    config = run.record.config or {}
    found = dict((config.get("task") or {}).get("trainer") or {})
    found.update({k: v for k, v in (config.get("trainer") or {}).items() if v is not None and k != "scale_epochs"})
    return found


def _trainer_labels(runs: Sequence[Run]) -> list[Run]:
    """Runs of one encoder, task and data trained with other trainer settings (epochs, learning rate, ...) get
    those settings in their data label, so each is its own row: per seed and mode the table keeps one run, and two
    budgets must never meet there (issue 45: one of them vanished)."""
    groups: dict[tuple, list[Run]] = {}
    for run in runs:
        groups.setdefault((run.encoder_key, run.task, run.data), []).append(run)
    out = []
    for members in groups.values():
        settings = [trainer(r) for r in members]
        differing = sorted({k for s in settings for k in s if len({repr(t.get(k)) for t in settings}) > 1})
        out += [dataclasses.replace(r, data=f"{r.data}, " + ", ".join(f"{k}={s.get(k)}" for k in differing))
                if differing else r for r, s in zip(members, settings)]
    return out


def edge_table(runs: Sequence[Run], names: EncoderNames, p_value: Callable | None) -> Table | None:
    """The table, or None without edge-probing runs."""
    found = _trainer_labels([dataclasses.replace(r, data=_data_label(r)) for r in edge_runs(runs)])
    if not found:
        return None
    rows, records, notes = [], [], []
    for key, members in names.split(found):
        label = names.label(key) if key is not None else "encoder"
        for task, data in sorted({(r.task, r.data) for r in members}):
            group = [r for r in members if r.task == task and r.data == data]
            cells, record = _row(label, task, data, group, _layers(group), p_value, notes)
            rows.append(cells)
            records.append(record)
    notes.append("F1 on test (lexical = layer 0, full = the learned mix of layers 0..L, gain = full − lexical per "
                 "seed); best layer by dev F1; expected layer = Σ l·Δ(l) / Σ Δ(l) over the dev differential scores "
                 "Δ(l) = F(0..l) − F(0..l−1) (— when the total gain is not positive or a prefix run is missing); "
                 "centre of gravity = Σ l·w_l of the full mix's weights. With L = 2 the expected layer is "
                 "1 + Δ(2)/(Δ(1)+Δ(2)): it only says whether layer 2 adds more than layer 1.")
    if any("layer_indices" in r for r in records):
        notes.append("An encoder that keeps some of a model's layers (encoder.layers) is probed at those: l is the "
                     "model's layer number (lexical = its first kept layer, L = its deepest, cumulative runs are "
                     "prefixes of the kept layers), and the figure's relative depth is l / L.")
    return Table("Edge probing: lexical vs full, and where each task is solved", HEADER, rows, notes,
                 key="edge_probing", records=records)


