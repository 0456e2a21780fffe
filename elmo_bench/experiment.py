"""One experiment: read → (cached) biLM layers → embedder → head → train → test → results.json.

``run_experiment`` is what ``run.py`` calls for every job of a Hydra run or sweep. It never names a task: the
task package behind ``cfg.task.target`` supplies reader, head, decoding and metric (elmo_bench.task_api).
"""
from __future__ import annotations

import importlib
import json
import logging
import math
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from elmo_bench.atomic import atomic_write_text
from elmo_bench.batching import Collator
from elmo_bench.cache import ActivationCache, LiveLayers
from elmo_bench.embedders import TaskEmbedder, build_glove
from elmo_bench.results import SCHEMA_VERSION, git_commit, write_results
from elmo_bench.run_logger import RunLogger
from elmo_bench.subsets import nested_subset, scaled_epochs
from elmo_bench.task_api import Task
from elmo_bench.train import TaskModel, TrainerConfig, evaluate, fit

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[1]


def load_task(target: str) -> Task:
    """``package.module:ClassName`` → a fresh task instance."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)()


def _pick(override: Any, default: Any) -> Any:
    return default if override is None else override


def trainer_config(cfg: DictConfig, fraction: float) -> TrainerConfig:
    """The task's trainer settings, overridden by any non-null value of the ``trainer`` group."""
    merged = dict(OmegaConf.to_container(cfg.task.get("trainer", {}), resolve=True))
    merged.update({k: v for k, v in OmegaConf.to_container(cfg.trainer, resolve=True).items()
                   if v is not None and k not in ("scale_epochs", "max_scaled_epochs")})
    trainer = TrainerConfig(**{k: v for k, v in merged.items() if k in TrainerConfig.__dataclass_fields__})
    base_epochs = trainer.max_epochs
    trainer.max_epochs = scaled_epochs(base_epochs, fraction, bool(cfg.trainer.get("scale_epochs", False)),
                                       cap=int(cfg.trainer.get("max_scaled_epochs") or 50))
    # patience grows with the epochs: a tiny fraction may score 0 for many short epochs before it finds entities
    trainer.patience = math.ceil(trainer.patience * trainer.max_epochs / max(base_epochs, 1))
    return trainer


def elmo_settings(cfg: DictConfig) -> dict[str, Any]:
    task_elmo = cfg.task.get("elmo", {})
    return {
        "placement": _pick(cfg.mix.get("placement"), task_elmo.get("placement", "input")),
        "l2_coef": float(_pick(cfg.mix.get("lambda"), task_elmo.get("lambda", 0.0))),
        "layer_norm": bool(_pick(cfg.mix.get("layer_norm"), task_elmo.get("layer_norm", False))),
        "dropout": float(_pick(cfg.mix.get("dropout"), task_elmo.get("dropout", 0.5))),
        "mode": cfg.mix.mode,
        "layer_index": cfg.mix.get("layer"),
    }


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def run_experiment(cfg: DictConfig, run_dir: Path) -> dict[str, Any]:
    run_dir.mkdir(parents=True, exist_ok=True)
    results_path = run_dir / "results.json"
    if results_path.exists():
        log.info("%s exists: this run is complete, nothing to do", results_path)
        return json.loads(results_path.read_text())
    timings: dict[str, float] = {}
    started = time.perf_counter()
    seed = int(cfg.seed)
    seed_everything(seed)
    torch.set_num_threads(int(cfg.get("threads", 1)) or 1)
    task = load_task(cfg.task.target)
    data_cfg = OmegaConf.to_container(cfg.data, resolve=True)
    splits = task.read(data_cfg)
    if "train" not in splits or "dev" not in splits:
        raise ValueError(f"task {task.name}: the data config must provide train and dev splits, found {sorted(splits)}")
    full_train_size = len(splits["train"])
    fraction = float(cfg.data.get("fraction", 1.0))
    # only the examples a run trains on go through the biLM: a 10% run computes 10% of the train split's layers
    splits["train"] = train = nested_subset(splits["train"], fraction, seed)
    for examples in splits.values():  # _index: the example's row in its split's activation source
        for index, example in enumerate(examples):
            example["_index"] = index
    log.info("data: %s (training fraction %s)", {k: len(v) for k, v in splits.items()}, fraction)
    task.fit_labels(train)
    timings["read_seconds"] = time.perf_counter() - started

    use_glove, use_elmo = bool(cfg.embedder.glove), bool(cfg.embedder.elmo)
    elmo = elmo_settings(cfg)
    layer_sources: dict[str, dict[str, Any] | None] = {name: None for name in splits}
    bilm_info: dict[str, Any] | None = None
    t0 = time.perf_counter()
    bilm_seconds = 0.0
    num_layers = elmo_dim = 0
    if use_elmo:
        from elmo_bench.bilm.weights import bilm_identity, load_bilm

        bilm = load_bilm(cfg.bilm.options, cfg.bilm.weights)
        bilm_id = bilm_identity(cfg.bilm.options, cfg.bilm.weights)
        bilm_info = {"name": cfg.bilm.get("name"), "options": str(cfg.bilm.options), "weights": str(cfg.bilm.weights),
                     "hash": bilm_id, "layers": bilm.num_layers, "dim": bilm.output_dim}
        num_layers, elmo_dim = bilm.num_layers, bilm.output_dim
        cache = ActivationCache(cfg.paths.cache_dir, bilm, bilm_id, max_segment=int(cfg.get("max_segment", 256)),
                                progress=bool(cfg.get("progress", True))) if cfg.cache else None
        for split, examples in splits.items():
            layer_sources[split] = {}
            for field in task.text_fields:
                sequences = [e[field] for e in examples]
                if cache is not None:
                    layer_sources[split][field] = cache.layers(sequences, name=f"{task.name}/{split}/{field}")
                else:
                    layer_sources[split][field] = LiveLayers(bilm, sequences, int(cfg.get("max_segment", 256)))
    timings["activation_seconds"] = time.perf_counter() - t0

    vocab, glove = None, None
    if use_glove:
        words = {w for examples in splits.values() for e in examples for f in task.text_fields for w in e[f]}
        vocab, glove = build_glove(words, cfg.embedder.glove_source, cfg.embedder.get("glove_path"), seed)
    embedder = TaskEmbedder(glove, bool(cfg.embedder.get("glove_trainable", False)), use_elmo, num_layers, elmo_dim,
                            elmo["placement"], elmo["mode"], elmo["layer_norm"], elmo["l2_coef"], elmo["dropout"],
                            elmo["layer_index"])
    head_cfg = OmegaConf.to_container(cfg.task.head, resolve=True)
    head = task.build_head(head_cfg, {f: embedder.input_dim for f in task.text_fields}, embedder.output_dim)
    model = TaskModel(embedder, head)
    collators = {split: Collator(task, vocab, layer_sources[split]) for split in splits}

    trainer = trainer_config(cfg, fraction)
    trainer.progress = bool(cfg.get("progress", True))
    config = OmegaConf.to_container(cfg, resolve=True)
    logger = RunLogger(cfg.logger.mode, run_dir, cfg.logger.project, run_dir.name, config)

    def on_epoch(epoch: int, record: dict[str, Any]) -> None:
        logger.log({"train_loss": record["train_loss"], **{f"dev/{k}": v for k, v in record["dev"].items()}}, step=epoch)

    t1 = time.perf_counter()
    history = fit(model, task, train, splits["dev"], collators["train"], collators["dev"], trainer, run_dir, seed,
                  on_epoch)
    timings["train_seconds"] = time.perf_counter() - t1

    t2 = time.perf_counter()
    metrics: dict[str, dict[str, float]] = {}
    for split in [s for s in splits if s != "train"]:  # dev, test and any extra test set (SRL's test_brown)
        metrics[split], predictions = evaluate(model, task, splits[split], collators[split], trainer.eval_batch_size)
        atomic_write_text(run_dir / f"predictions_{split}.json", json.dumps(
            [{"id": e.get("id", i), "prediction": p} for i, (e, p) in enumerate(zip(splits[split], predictions))]))
    timings["eval_seconds"] = time.perf_counter() - t2
    if use_elmo:  # with cache=false the biLM runs inside every batch: count that time too
        bilm_seconds = cache.seconds_in_bilm if cache is not None else sum(
            source.seconds_in_bilm for sources in layer_sources.values() for source in sources.values())
    timings["bilm_seconds"] = bilm_seconds
    timings["total_seconds"] = time.perf_counter() - started

    results = {
        "schema": SCHEMA_VERSION,
        "task": task.name,
        "embedder": cfg.embedder.name,
        "seed": seed,
        "config": config,
        "data": {"name": cfg.data.get("name"), "fraction": fraction, "full_train_examples": full_train_size,
                 **{f"{k}_examples": len(v) for k, v in splits.items()}},
        "metrics": metrics,
        "main_metric": task.main_metric,
        "mixes": embedder.mix_summary(),
        "elmo": elmo if use_elmo else None,
        "epochs": {"run": len(history["history"]), "best": history["best_epoch"], "history": history["history"]},
        "timings": timings,
        "bilm": bilm_info,
        "git_commit": git_commit(REPO),
    }
    write_results(results_path, results)
    logger.summary({f"{s}/{k}": v for s, m in metrics.items() for k, v in m.items()})
    logger.finish()
    log.info("results: %s", json.dumps(metrics))
    return results

