"""Probe neighbours: read SemCor, gather every context of the query words (elmo_bench.probe.neighbours.contexts),
take each layer from the activation cache, and score sense agreement@k per view (each probed layer, ``average``:
the mean of all layers, and GloVe; elmo_bench.probe.neighbours.agreement). Printed: the pooled numbers, each
word's, GloVe's nearest word types and the Table 4 rows (a query context → its nearest other context, with both
senses, per view); results.json (task ``neighbours``): ``metrics.all``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.lib.semcor import WsdSentence, read_semcor, token_lists
from elmo_bench.probe.neighbours import agreement as agree
from elmo_bench.probe.neighbours import glove_rows
from elmo_bench.probe.neighbours.config import SEMCOR, NeighboursSettings
from elmo_bench.probe.neighbours.contexts import Context, Group, Queries, collect


@dataclass
class Scored:
    """One group's scores: per view its ViewScores, the sense prior and most-frequent-sense hit per context."""

    group: Group
    views: dict[str, agree.ViewScores]
    prior: np.ndarray
    mfs: np.ndarray


def context_views(array: np.ndarray, context: Context, positions: list[int]) -> np.ndarray:
    """(layers, n, dim) → (len(positions) + 1, dim): each chosen layer's mean over the span's tokens, then the
    mean of every layer's (``average``)."""
    per_layer = np.asarray(array[:, context.start: context.end], dtype=np.float64).mean(axis=1)
    return np.concatenate([per_layer[positions], per_layer.mean(axis=0, keepdims=True)], axis=0)


def group_vectors(queries: Queries, layers: Any, positions: list[int]) -> list[np.ndarray]:
    """Per group (views, contexts, dim); each sentence's layers read once."""
    wanted: dict[int, list[tuple[int, int]]] = {}
    for g, group in enumerate(queries.groups):
        for c, context in enumerate(group.contexts):
            wanted.setdefault(context.sentence, []).append((g, c))
    out: list[np.ndarray | None] = [None] * len(queries.groups)
    for sentence in sorted(wanted):
        array = np.asarray(layers.get(sentence))
        for g, c in wanted[sentence]:
            views = context_views(array, queries.groups[g].contexts[c], positions)
            if out[g] is None:
                out[g] = np.zeros((len(views), len(queries.groups[g].contexts), views.shape[1]))
            out[g][:, c] = views
    return [v for v in out if v is not None]


def glove_vectors(group: Group, sentences: list[WsdSentence], table: glove_rows.GloveTable) -> np.ndarray:
    """(contexts, dim): each context's word form in GloVe."""
    return np.stack([glove_rows.context_vector(table, sentences[c.sentence].tokens[c.start: c.end])
                     for c in group.contexts])


def score(queries: Queries, vectors: list[np.ndarray], names: list[str], table: glove_rows.GloveTable | None,
          k: int) -> list[Scored]:
    """Every group scored in every view (GloVe last, when loaded)."""
    out = []
    for group, stacked in zip(queries.groups, vectors):
        same, other = agree.shares_sense(group), agree.candidates(group)
        views = {name: agree.score_view(stacked[v], same, other, k) for v, name in enumerate(names)}
        if table is not None:
            views["glove"] = agree.score_view(glove_vectors(group, queries.sentences, table), same, other, k)
        out.append(Scored(group, views, agree.sense_prior(same, other), agree.most_frequent_sense(group)))
    return out


def pooled(scored: list[Scored], seed: int) -> dict[str, float]:
    """``metrics.all``: every view's agreement over all query contexts with its interval, the sense prior and the
    most-frequent-sense rate."""
    metrics: dict[str, float] = {}
    for view in scored[0].views:
        values = np.concatenate([s.views[view].agreement for s in scored])
        low, high = agree.interval(values, seed)
        metrics.update({f"{view}_sense_agreement": float(values.mean()), f"{view}_sense_agreement_lo": low,
                        f"{view}_sense_agreement_hi": high})
    metrics["sense_prior"] = float(np.concatenate([s.prior for s in scored]).mean())
    metrics["most_frequent_sense"] = float(np.concatenate([s.mfs for s in scored]).mean())
    metrics["queries"] = int(sum(len(s.prior) for s in scored))
    return metrics


def per_word(scored: list[Scored]) -> dict[str, dict[str, Any]]:
    """Each lemma and pos: its contexts, senses, sense prior and each view's agreement (4 decimals)."""
    return {s.group.name: {"contexts": len(s.group.contexts),
                           "senses": len({key for c in s.group.contexts for key in c.keys}),
                           "sense_prior": round(float(s.prior.mean()), 4),
                           "most_frequent_sense": round(float(s.mfs.mean()), 4),
                           **{f"{view}_sense_agreement": round(float(v.agreement.mean()), 4)
                              for view, v in s.views.items()}}
            for s in scored}


def marked(sentence: WsdSentence, context: Context) -> str:
    """The sentence with the query word in brackets."""
    tokens = sentence.tokens
    return " ".join([*tokens[: context.start], "[" + " ".join(tokens[context.start: context.end]) + "]",
                     *tokens[context.end:]])


def examples(group: Group, count: int) -> list[int]:
    """The first context of each of the group's ``count`` most frequent senses (by first key), in that order."""
    counts: dict[str, int] = {}
    for c in group.contexts:
        counts[c.keys[0]] = counts.get(c.keys[0], 0) + 1
    senses = sorted(counts, key=lambda key: (-counts[key], key))[:count]
    return [next(i for i, c in enumerate(group.contexts) if c.keys[0] == key) for key in senses]


def table4(scored: list[Scored], sentences: list[WsdSentence], count: int) -> list[dict[str, Any]]:
    """The paper's Table 4 rows: per group, query context and view, the nearest other context and both senses."""
    rows = []
    for s in scored:
        for i in examples(s.group, count):
            query = s.group.contexts[i]
            for view, v in s.views.items():
                near = s.group.contexts[int(v.nearest[i])]
                rows.append({"word": s.group.name, "view": view, "query": marked(sentences[query.sentence], query),
                             "query_sense": " ".join(query.keys), "neighbour": marked(sentences[near.sentence], near),
                             "neighbour_sense": " ".join(near.keys), "cosine": round(float(v.similarity[i]), 4),
                             "same_sense": bool(set(query.keys) & set(near.keys))})
    return rows


def run(context: ProbeContext) -> ProbeOutcome:
    """Probe neighbours on ``context``'s encoder (see the module docstring)."""
    settings: NeighboursSettings = context.settings
    where = context.data_dir(settings.semcor, SEMCOR)
    semcor = read_semcor(str(where), progress=context.progress)
    queries = collect(semcor, settings.words, settings.max_contexts, where)
    lemmas = sorted({g.lemma for g in queries.groups})
    table = None if not settings.glove else glove_rows.load(
        {t for s in queries.sentences for t in s.tokens} | set(lemmas), settings.glove_path, settings.glove_vocab)
    probed = context.probed_layers(settings.layers)
    layers = context.layers(token_lists(queries.sentences), "neighbours/semcor")
    names = [f"layer_{k}" for _, k in probed] + ["average"]
    vectors = group_vectors(queries, layers, [at for at, _ in probed])
    scored = score(queries, vectors, names, table, settings.k)
    metrics = pooled(scored, context.seed)
    printed = {"data": "semcor", "k": settings.k, "all": {k: round(v, 4) for k, v in metrics.items()},
               "words": per_word(scored),
               "glove_neighbours": None if table is None else {w: glove_rows.nearest_types(table, w, settings.k)
                                                               for w in lemmas},
               "table4": table4(scored, queries.sentences, settings.examples)}
    data = {"name": "semcor", "fraction": len(queries.sentences) / max(1, len(semcor)),
            "semcor_sentences": len(semcor), "sentences": len(queries.sentences),
            "contexts": {g.name: len(g.contexts) for g in queries.groups}, "glove": table is not None}
    return ProbeOutcome(printed, {"all": metrics}, f"layer_{probed[-1][1]}_sense_agreement", data)
