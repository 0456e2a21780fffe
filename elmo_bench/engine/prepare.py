"""A run's inputs, made ready before its model is built (elmo_bench.engine.experiment's first two steps): the
splits read, checked, cut to ``data.fraction`` and indexed, and each split's frozen encoder layers as a source the
collator reads (the activation cache, or layers computed live), with the encoder (or an adapted biLM) loaded once."""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.data.split_checks import check_splits
from elmo_bench.encoders.bilm.encoder import BiLMEncoder, as_encoder
from elmo_bench.encoders.build import build_encoder, encoder_record, layer_ids
from elmo_bench.encoders.cache import ActivationCache
from elmo_bench.encoders.cache_read import LiveLayers, check_first_sentence, source_forced_unknown
from elmo_bench.encoders.erase_settings import erase_spec
from elmo_bench.encoders.erasing import apply_erase
from elmo_bench.encoders.kinds import kind_of
from elmo_bench.encoders.random_init import check_random_init, randomise
from elmo_bench.encoders.settings import cache_dtype
from elmo_bench.engine.fractions import nested_subset
from elmo_bench.engine.run_config import DataPart, EncoderPart, RunConfig
from elmo_bench.records import lm_adaptation
from elmo_bench.tasks.api import INDEX_KEY, Example, Task

log = logging.getLogger(__name__)


@dataclass
class Prepared:
    """What the steps hand on: the splits, the frozen biLM's layer sources and the timings so far."""

    splits: dict[str, list[Example]]
    full_train_size: int
    fraction: float
    layer_sources: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    bilm_info: dict[str, Any] | None = None
    encoder_info: dict[str, Any] | None = None  # the encoder's identity, layers and width (results.json "encoder")
    num_layers: int = 0
    layer_ids: list[int] = field(default_factory=list)  # the model's index of each layer (mix.layer names these)
    elmo_dim: int = 0
    cache: ActivationCache | None = None
    timings: dict[str, float] = field(default_factory=dict)
    #: the share of each split's examples also in train (and of test in dev), before data.fraction (split_checks)
    split_overlap: dict[str, float] = field(default_factory=dict)


def index_examples(splits: dict[str, list[Example]]) -> None:
    """Write each example's row in its split under ``INDEX_KEY`` (the contract with the collator: row i of a split's
    activation source holds the layers of the example indexed i)."""
    for examples in splits.values():
        for index, example in enumerate(examples):
            example[INDEX_KEY] = index


def read_checked_splits(data_part: DataPart, task: Task) -> tuple[dict[str, list[Example]], dict[str, float]]:
    """Every split as the task reads it, checked as a run checks it (train and dev present; no empty split; their
    overlap measured and refused above ``data.max_overlap``, elmo_bench.data.split_checks), with that overlap: the
    one reading step of a run, of ``elmo-bench evaluate`` and of ``elmo-bench plan``."""
    data = data_part.plain()
    splits = task.read(data)
    if "train" not in splits or "dev" not in splits:
        raise ConfigError(f"task {task.name}: the data config must provide train and dev splits, found {sorted(splits)}")
    overlap = check_splits(splits, data, data_part.common, task.example_key)  # empty, leaks
    return splits, overlap


def read_data(data: DataPart, task: Task, seed: int) -> Prepared:
    """Read every split (checked: :func:`read_checked_splits`), take the training subset (``data.fraction``), index
    examples, fit the label sets."""
    started = time.perf_counter()
    splits, overlap = read_checked_splits(data, task)
    log.info("data: split overlap %s", {k: f"{100 * v:.1f}%" for k, v in overlap.items()})
    full_train_size = len(splits["train"])
    fraction = data.fraction
    # only the examples a run trains on go through the biLM: a 10% run computes 10% of the train split's layers
    splits["train"] = nested_subset(splits["train"], fraction, seed)
    index_examples(splits)
    log.info("data: %s (training fraction %s)", {k: len(v) for k, v in splits.items()}, fraction)
    task.fit_labels(splits)
    return Prepared(splits, full_train_size, fraction, timings={"read_seconds": time.perf_counter() - started},
                    split_overlap=overlap)


def load_encoder_info(encoder: EncoderPart, amp: str) -> tuple[Any, dict[str, Any] | None]:
    """The run's frozen encoder (``encoder=``; the default kind when absent; checked when the RunConfig was made)
    and the record results.json keeps under its kind's own group (the biLM's ``bilm``: a kind that is loaded from
    its group, its ``load``; None for other kinds: their record is ``encoder``)."""
    kind = kind_of(encoder.spec)
    if kind.load is not None:
        made, info = kind.load(encoder.spec, encoder.bilm)
        return apply_erase(made, erase_spec(encoder.spec)), info
    spec = encoder.plain()
    mode, seed = spec.pop("random_init", None), int(spec.pop("random_seed", None) or 0)
    erase = erase_spec(spec)
    spec.pop("erase", None)
    check_random_init(str(spec.get("kind")), mode, "encoder.random_init")
    return apply_erase(randomise(build_encoder(spec, amp=amp), mode, seed), erase), None


def distinct_text(task: Task, examples: Sequence[Example]) -> list[list[str]]:
    """Every text field of ``examples`` as token sequences, each distinct sequence once, in first-seen order.
    Examples the task says are pieces of another's text (``Task.own_text`` false: SST's sub-sentence phrases) are
    left out: their sentence is in the text."""
    seen: set[tuple[str, ...]] = set()
    out: list[list[str]] = []
    for example in examples:
        if not task.own_text(example):
            continue
        for name in task.text_fields:
            key = tuple(example[name])
            if key and key not in seen:
                seen.add(key)
                out.append(list(key))
    return out


def adapt_bilm(run: RunConfig, task: Task, prepared: Prepared, base_info: dict[str, Any],
               run_dir: Path, device: torch.device) -> tuple[Any, dict[str, Any]]:  # (BiLMEncoder, record)
    """bilm=adapted: the base biLM fine-tuned on the training examples this run uses (built once, cached), loaded
    frozen; its record keeps the base and the adapted hash. The dev text is scored (never trained on) for Table 7."""
    from elmo_bench.bilm.weights import load_bilm  # lazy: h5py
    from elmo_bench.pretrain.adapted_bilm import ensure_adapted  # lazy: h5py

    started = time.perf_counter()
    recipe = dict(run.encoder.bilm.recipe) if run.encoder.bilm.recipe else None
    adapted = ensure_adapted(run.encoder.bilm.base_dir, distinct_text(task, prepared.splits["train"]),
                             run.paths.cache_dir, recipe, progress=run.runtime.progress,
                             heldout=distinct_text(task, prepared.splits["dev"]), device=str(device))
    bilm = load_bilm(adapted.options, adapted.weights)
    info = {**base_info, "options": str(adapted.options), "weights": str(adapted.weights),
            "hash": adapted.adapted_hash, **adapted.record(), "built_here": adapted.built}
    bilm = BiLMEncoder(bilm, adapted.adapted_hash, info)
    record = json.loads((adapted.weights.parent / "adapted.json").read_text())
    scored = record["heldout_perplexity"]
    if scored:  # Table 7: the dev text's perplexity under the base and the adapted biLM
        lm_adaptation.write(run_dir / lm_adaptation.FILENAME, task.name, str(run.data.name), "dev",
                            scored["tokens"], scored["before"], scored["after"], adapted.base_hash,
                            adapted.adapted_hash, record["recipe"])
    prepared.timings["adapt_seconds"] = time.perf_counter() - started
    return bilm, info


def prepare_layers(run: RunConfig, task: Task, prepared: Prepared, bilm: Any, bilm_info: dict[str, Any] | None) -> None:
    """Attach per split and text field a source of the frozen encoder's layers (the activation cache or live).
    ``bilm`` is any Encoder (a bare BiLM is wrapped, keyed by ``bilm_info["hash"]``); ``bilm_info`` is the biLM
    record for results.json, None for other encoder kinds."""
    started = time.perf_counter()
    bilm = as_encoder(bilm, (bilm_info or {}).get("hash"))
    prepared.bilm_info, prepared.num_layers, prepared.elmo_dim = bilm_info, bilm.num_layers, bilm.dim
    prepared.encoder_info = encoder_record(bilm)
    prepared.layer_ids = layer_ids(bilm)
    max_segment = int(run.runtime.max_segment)
    dtype = cache_dtype(run.encoder.spec)
    train = prepared.splits.get("train") or []
    if train:  # the encoder vets itself on the first training sentence before any layer is computed
        check_first_sentence(bilm, [train[0][task.text_fields[0]]], f"the first training sentence ({task.name})")
    cache = ActivationCache(run.paths.cache_dir, bilm, max_segment=max_segment,
                            progress=run.runtime.progress, dtype=dtype,
                            shard_sentences=int(run.runtime.shard_sentences)) if run.runtime.cache else None
    prepared.cache = cache
    forced: dict[str, int] = {}
    for split, examples in prepared.splits.items():
        sources: dict[str, Any] = {}
        for name in task.text_fields:
            sequences = [e[name] for e in examples]
            sources[name] = (cache.layers(sequences, name=f"{task.name}/{split}/{name}") if cache is not None
                             else LiveLayers(bilm, sequences, max_segment))
            count = source_forced_unknown(sources[name], bilm, sequences)
            if count is not None:
                forced[f"{split}/{name}"] = count
                if count:
                    log.warning("encoder: %d words of %s/%s became the unknown token: their sentences exceed the "
                                "window and the words are longer than half of it", count, split, name)
        prepared.layer_sources[split] = sources
    # the precision the head sees: the cache's storage, or the encoder's own fp32 output when live
    prepared.encoder_info["layer_precision"] = dtype if cache is not None else "fp32"
    if forced:
        prepared.encoder_info["forced_unknown_words"] = forced
    prepared.timings["activation_seconds"] = time.perf_counter() - started
