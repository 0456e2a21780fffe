"""Probe wsd: read SemCor and the evaluation sets, take every layer from the activation cache, fit sense
centroids per layer, disambiguate each set (elmo_bench.probe.wsd.centroids), write ``keys/<set>.<view>.key`` into the run
directory (scorable with ``elmo-bench score wsd GOLD PRED``). Printed: per set, ``<view>_f1`` and
``<view>_coverage``; results.json (task ``wsd``): per set every view's f1, precision, recall and coverage."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.paths import CACHE_DIR
from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.lib.semcor import read_semcor, token_lists
from elmo_bench.probe.wsd import centroids as wsd
from elmo_bench.probe.wsd import data as wsd_data
from elmo_bench.probe.wsd.config import EVAL_ROOT, SEMCOR, WsdSettings
from elmo_bench.probe.wsd.evaluate import Evaluation, Fallbacks, WsdInputs, WsdLayers, evaluate
from elmo_bench.probe.wsd.wordnet import first_sense, open_wordnet


def read(context: ProbeContext, settings: WsdSettings) -> WsdInputs:
    """All of SemCor, the part embedded for the centroids, and every evaluation set with its gold keys."""
    semcor = read_semcor(str(context.data_dir(settings.semcor, SEMCOR)), progress=context.progress)
    train = semcor[: settings.max_train_sentences] if settings.max_train_sentences else semcor
    root = str(context.data_dir(settings.eval_root, EVAL_ROOT))
    eval_sets = {}
    for name in settings.sets:
        sentences, gold, _ = wsd_data.read_eval_set(root, name)
        eval_sets[name] = (sentences, gold)
    return WsdInputs(semcor, train, eval_sets)


def write_keys(run_dir: Path, evaluation: Evaluation) -> None:
    """RUN/keys/<set>.<view>.key: one predicted key per instance, in instance order."""
    for name, views in evaluation.keys.items():
        for view, pairs in views.items():
            atomic_write_text(run_dir / "keys" / f"{name}.{view}.key", "".join(f"{i} {k}\n" for i, k in pairs))


def run(context: ProbeContext) -> ProbeOutcome:
    """Probe wsd on ``context``'s encoder (see the module docstring)."""
    settings: WsdSettings = context.settings
    inputs = read(context, settings)
    work = settings.wordnet_work or str(CACHE_DIR / "nltk_data")
    fallbacks = Fallbacks(wsd.most_frequent_senses(wsd.sense_counts(inputs.semcor)),
                          None if settings.wordnet is None else first_sense(open_wordnet(settings.wordnet, work)))
    record = context.encoder_record
    layers = WsdLayers(context.layers(token_lists(inputs.train), "wsd/semcor"),
                       {name: context.layers(token_lists(sentences), f"wsd/{name}")
                        for name, (sentences, _) in inputs.eval_sets.items()}, dict(record), 0.0)
    centroids = wsd.build_centroids(inputs.train, layers.train, context.progress)
    evaluation = evaluate(centroids, inputs, layers, fallbacks, context.progress)
    write_keys(context.run_dir, evaluation)
    printed = {name: {k: round(v, 2) for k, v in m.items() if k.endswith(("_f1", "_coverage"))}
               for name, m in evaluation.metrics.items()}
    data: dict[str, Any] = {
        "name": "semcor", "fraction": len(inputs.train) / max(1, len(inputs.semcor)),
        "train_sentences": len(inputs.train), "train_examples": sum(len(s.spans) for s in inputs.train),
        "train_senses": len(centroids.keys), "semcor_sentences": len(inputs.semcor),
        "eval_instances": {name: len(gold) for name, (_, gold) in inputs.eval_sets.items()},
        "answered_by": evaluation.answered_by, "coverage": evaluation.coverage,
        "wordnet_fallback": fallbacks.wordnet is not None}
    return ProbeOutcome(printed, evaluation.metrics, f"layer_{int(record['layers']) - 1}_f1", data, seed=0,
                        views=centroids.views)
