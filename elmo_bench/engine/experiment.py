"""One experiment: read → (cached) biLM layers → embedder → head → train → test → results.json.

``run_experiment`` is what ``run.py`` calls for every job of a Hydra run or sweep, in six steps, each a function
(the first two in elmo_bench.engine.prepare): ``read_data``, ``prepare_layers``, :func:`build_model`,
:func:`train_model` (elmo_bench.engine.loop.fit), :func:`evaluate_splits` and :func:`write_run`. It never names a task: the registry (``elmo_bench.tasks.registry``) maps
``run.task.name`` to the task package that supplies reader, head, decoding and metric (elmo_bench.tasks.api).
It takes the run's typed RunConfig (elmo_bench.engine.run_config: every option already checked), the ``device`` is
resolved (elmo_bench.base.device: CUDA asked for where there is none is a one-line error) and the run directory's
identity is checked (elmo_bench.engine.run_identity): a directory made by another configuration is never reused. The
biLM (cache building, live layers) and the task model run on that device; ``amp`` sets the heads' precision.
elmo_bench.engine.evaluate rebuilds a finished run from its ``best.pt`` with these steps (``elmo-bench evaluate``).
"""
from __future__ import annotations

import contextlib
import json
import logging
import random
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from elmo_bench.base import checkpoints
from elmo_bench.base.device import describe, normalise_amp, resolve_device
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import REPO
from elmo_bench.encoders.build import layer_ids
from elmo_bench.encoders.kinds import encoder_plugin_of, label_record
from elmo_bench.encoders.protocol import cache_id, moved
from elmo_bench.engine.code_identity import task_code_dir, task_code_hash
from elmo_bench.engine.collate import Collator
from elmo_bench.engine.live_identity import identity
from elmo_bench.engine.loop import RESTART_ADVICE, TaskModel, TrainerConfig, evaluate, fit
from elmo_bench.engine.plugin_code import with_plugin
from elmo_bench.engine.prepare import Prepared, adapt_bilm, load_encoder_info, prepare_layers, read_data
from elmo_bench.engine.run_config import RunConfig, recorded_config
from elmo_bench.engine.run_identity import choose_run_dir, computed_in
from elmo_bench.engine.run_lock import LOCK_FILE, run_dir_lock, run_dir_lock_or_undo
from elmo_bench.engine.run_logger import RunLogger
from elmo_bench.engine.run_outputs import record_split
from elmo_bench.engine.run_records import CODE, read_record, record_extension, record_identity
from elmo_bench.modules.token_embedders import TaskEmbedder, WordVocabulary, build_glove
from elmo_bench.records.elmo_settings import canonical_mix, mix_position
from elmo_bench.records.portable import portable
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord, git_commit
from elmo_bench.records.stopping import StoppingRule
from elmo_bench.tasks.api import Task
from elmo_bench.tasks.registry import declaration

log = logging.getLogger(__name__)


def task_target(name: str) -> str:
    """The Task class (``module:Class``) task ``name`` declares; ConfigError naming the known tasks otherwise."""
    return declaration(name).resolved_target()


def load_task(name: str) -> Task:
    """Registry name (``ner``), or a Task class path (``elmo_bench.tasks.ner.task:NerTask``), → a fresh task."""
    import importlib

    target = name if ":" in name else task_target(name)
    module, _, cls = target.partition(":")
    try:
        found = getattr(importlib.import_module(module), cls)  # checked: a declared target (tests/test_import_graph)
    except (ImportError, AttributeError) as missing:  # a plug-in's target names no class: its line, no traceback
        raise ConfigError(f"task {name!r}: its target {target} cannot be loaded ({type(missing).__name__}: "
                          f"{missing}); expected module:Class of a Task (TASK's target in its config.py)") from missing
    return found()


def trainer_config(run: RunConfig, fraction: float) -> TrainerConfig:
    """The run's trainer settings (RunConfig's overlay: the trainer group over the task's block), with epochs (and
    patience) scaled for small data fractions when asked (``trainer.scale_epochs``)."""
    return run.trainer(fraction)


def apply_new_stopping_rule(run_dir: Path, rule: StoppingRule, current: dict[str, Any],
                            run: RunConfig) -> dict[str, Any] | None:
    """A run whose identity changed only in its stopping rule (run_identity.check_run_dir said so), replayed under
    the new rule over its checkpoint's dev scores. Continuing is exact only when the new rule trains every epoch the
    run trained; otherwise ConfigError. A finished run that the new rule ends where it ended (a raised cap over a run
    that early stopping ended) keeps its results, with the new config: returned. Else the run takes the new identity
    and loses its old results (record_extension), and None says: continue it from its checkpoint."""
    state = checkpoints.load(run_dir / "checkpoint.pt", "cpu", advice=RESTART_ADVICE)
    scores = [record["dev_metric"] for record in state["history"]]
    stop = rule.first_stop(scores)
    if stop is not None:
        raise ConfigError(f"{run_dir}: the new stopping rule (max_epochs {rule.max_epochs}, patience "
                          f"{rule.patience}, min_epochs {rule.min_epochs}) would have stopped this run before "
                          f"epoch {stop}, but it trained {len(scores)} epochs; it cannot be continued exactly: "
                          f"choose another directory (hydra.run.dir=...) or delete it")
    results_path = run_dir / RESULTS_FILE
    if results_path.exists() and rule.stops_before(len(scores), state["best_epoch"]):
        record = RunRecord.read(results_path)
        record.config = recorded_config(run.config())
        record.epochs["stopped_by"] = rule.stopped_by(len(scores), state["best_epoch"])
        record.write(results_path)
        record_identity(run_dir, current, run)
        log.info("%s: the new stopping rule ends this run where it ended: results kept", results_path)
        return record.to_dict()
    record_extension(run_dir, current, run)
    log.info("%s: stopping rule changed, continuing after epoch %d", run_dir, len(scores) - 1)
    return None


def canonical_run_mix(run: RunConfig, layers: int | Sequence[int]) -> RunConfig:
    """The run with its ``mix`` made canonical (elmo_bench.records.elmo_settings.canonical_mix): cumulative 0 / L
    are the runs of layer 0 / the learned mix (one identity, one record). ``layers``: the encoder's layer count or
    the model's indices of its layers (:func:`elmo_bench.encoders.build.layer_ids`)."""
    return run.with_mix(canonical_mix(run.mix.mix, layers))


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def build_head(task: Task, head_cfg: dict[str, Any], input_dims: dict[str, int], elmo_output_dim: int) -> Any:
    """``task.build_head``; a head setting that the composed ``task.head`` (its HeadConfig's defaults, the one source)
    leaves out, or one the head does not take, is one ConfigError line naming it."""
    try:
        return task.build_head(head_cfg, input_dims, elmo_output_dim)
    except (TypeError, KeyError) as exc:
        text = str(exc)
        if isinstance(exc, TypeError) and not any(word in text for word in ("keyword-only argument",
                                                                            "keyword argument", "positional argument")):
            raise  # a KeyError is a head setting the task reads that the YAML leaves out (SQuAD's max_span_length)
        raise ConfigError(f"config: task.head of task {task.name!r} does not fit its head: {text}") from exc


def build_model(run: RunConfig, task: Task, prepared: Prepared, seed: int,
                glove_table: tuple[WordVocabulary, torch.Tensor] | None = None
                ) -> tuple[TaskModel, dict[str, Collator], WordVocabulary | None]:
    """GloVe table + ELMo mixes (TaskEmbedder) + the task head (a TaskModel on the CPU, with the run's ``amp``),
    and one collator per split. ``glove_table`` (vocabulary, (rows, dim) table) replaces reading the GloVe file,
    when a saved model is rebuilt: its checkpoint holds the vocabulary and the table."""
    vocab, glove = glove_table if glove_table is not None else (None, None)
    if run.embedder.glove and glove_table is None:
        words = {w for examples in prepared.splits.values() for e in examples for f in task.text_fields for w in e[f]}
        vocab, glove = build_glove(words, run.embedder.glove_source, run.embedder.glove_path, seed)
    elmo = run.task.elmo if run.embedder.elmo else None
    if elmo is not None and prepared.layer_ids:  # mix.layer is the model's index; the mix counts its layers
        elmo = mix_position(elmo, prepared.layer_ids)
    embedder = TaskEmbedder(glove, bool(run.embedder.glove_trainable), elmo, prepared.num_layers, prepared.elmo_dim)
    head_cfg = run.task.head_settings()
    head = build_head(task, head_cfg, {f: embedder.input_dim for f in task.text_fields}, embedder.output_dim)
    collators = {split: Collator(task, vocab, prepared.layer_sources.get(split)) for split in prepared.splits}
    return TaskModel(embedder, head, amp=normalise_amp(run.runtime.amp)), collators, vocab


def assemble(run: RunConfig, task: Task, prepared: Prepared, bilm: Any, bilm_info: dict[str, Any] | None,
             device: torch.device, seed: int, glove_table: tuple[WordVocabulary, torch.Tensor] | None = None
             ) -> tuple[TaskModel, dict[str, Collator], WordVocabulary | None]:
    """The one assembly step of a run and of its re-evaluation (engine/evaluate.py): the frozen biLM's layer
    sources per split (activation cache or live, computed on ``device``), then embedder + head + collators
    (build_model), the model moved to ``device``."""
    if bilm is not None:
        prepare_layers(run, task, prepared, moved(bilm, device), bilm_info)
    model, collators, vocab = build_model(run, task, prepared, seed, glove_table)
    return model.to(device), collators, vocab


def evaluate_splits(model: TaskModel, task: Task, prepared: Prepared, collators: dict[str, Collator],
                    trainer: TrainerConfig, run_dir: Path) -> dict[str, dict[str, float]]:
    """Metrics of every split but train (dev, test and extra test sets such as SRL's test_brown); predictions and
    the test split's per-example statistics into the run directory (elmo_bench.engine.run_outputs)."""
    metrics: dict[str, dict[str, float]] = {}
    for split in [s for s in prepared.splits if s != "train"]:
        examples = prepared.splits[split]
        metrics[split], predictions = evaluate(model, task, examples, collators[split], trainer.eval_batch_size)
        record_split(run_dir, task, split, examples, predictions, metrics[split])
    return metrics


def write_run(run_dir: Path, run: RunConfig, task: Task, prepared: Prepared, model: TaskModel,
              history: dict[str, Any], metrics: dict[str, dict[str, float]]) -> dict[str, Any]:
    """results.json: the one record the report reads (a RunRecord, elmo_bench.records.run_record); paths relative
    (elmo_bench.records.portable), the encoder named by its identity."""
    use_elmo = bool(run.embedder.elmo)
    record = RunRecord(
        task=task.name,
        embedder=run.embedder.name,
        seed=int(run.runtime.seed),
        config=portable(recorded_config(run.config()), run_dir),
        data={"name": run.data.name, "fraction": prepared.fraction,
              "full_train_examples": prepared.full_train_size,
              **{f"{k}_examples": len(v) for k, v in prepared.splits.items()},
              **({"split_overlap": prepared.split_overlap} if prepared.split_overlap else {})},
        metrics=metrics,
        main_metric=task.main_metric,
        mixes=model.embedder.mix_summary(),
        elmo=run.task.elmo.record() if use_elmo else None,
        epochs={"run": len(history["history"]), "best": history["best_epoch"], "stopped_by": history["stopped_by"],
                "history": history["history"]},
        history=[{"epoch": h["epoch"], "dev_metric": h["dev_metric"], "loss": h["train_loss"],
                  "seconds": h["seconds"]} for h in history["history"]],
        timings=prepared.timings,
        device=describe(model.device, str(run.runtime.device), model.amp),
        bilm=portable(prepared.bilm_info, run_dir),
        encoder=portable(prepared.encoder_info, run_dir),
        git_commit=git_commit(REPO),
        extra={"plugins": {"task": f"{task.name}@{declaration(task.name).version}",
                           **({"encoder": encoder_plugin_of(run.encoder.spec)} if use_elmo else {})},
               CODE: {"task": task_code_hash(task_target(task.name).partition(":")[0].rpartition(".")[0])},
               **label_record(prepared.encoder_info if use_elmo else None)},
    )
    record.write(run_dir / RESULTS_FILE)
    return record.to_dict()


def run_experiment(run: RunConfig, run_dir: Path, on_claimed: Callable[[Path], None] | None = None,
                   older: Path | None = None) -> dict[str, Any]:
    """One run in ``run_dir``, holding its lock (elmo_bench.engine.run_lock): a second process started into the same
    directory stops at once with ``DIR is in use by pid N``, before it reads or writes anything there.
    ``on_claimed(run_dir)`` is called once the lock and the identity check passed and the run will compute (not for
    a run skipped as already done): run.py writes Hydra's records there (elmo_bench.commands.hydra_records).
    ``run``: the door's RunConfig (engine.config_door: run.py's resolve_run_config, a test's run_config).
    ``older``: the run's directory of the older naming scheme (run_identity.choose_run_dir), tried when something
    was computed there and nothing in ``run_dir``; ``run_dir`` is removed again when the run went on there."""
    older = older if older is not None and computed_in(older) and not computed_in(run_dir) else None
    with contextlib.ExitStack() as held:
        held.enter_context(run_dir_lock_or_undo(run_dir))   # bad input (an eraser refused) leaves nothing behind
        if older is not None:
            held.enter_context(run_dir_lock(older))
        results = _run_locked(run, run_dir, on_claimed or (lambda where: None), older)
    if older is not None and {p.name for p in run_dir.iterdir()} == {LOCK_FILE}:  # the run went on in older
        (run_dir / LOCK_FILE).unlink()
        run_dir.rmdir()
    return results


def _run_locked(run: RunConfig, run_dir: Path, on_claimed: Callable[[Path], None],
                older: Path | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    seed = int(run.runtime.seed)
    device = resolve_device(run.runtime.device)
    task_name = run.task.name
    task_package = task_target(task_name).partition(":")[0].rpartition(".")[0]
    bilm, bilm_info = load_encoder_info(run.encoder, run.runtime.amp) if run.embedder.elmo else (None, None)
    if bilm is not None:  # cumulative 0 / L: the runs of layer 0 / the learned mix (one identity, one record)
        run = canonical_run_mix(run, layer_ids(bilm))
    current = with_plugin(identity(run, bilm_info["hash"] if bilm_info else None, None), "task", task_name,
                          declaration(task_name).version)
    if bilm is not None:
        current["encoder.plugin"] = encoder_plugin_of(run.encoder.spec)
    if bilm is not None and bilm_info is None:  # another encoder kind: its identity stands where the biLM hash did
        current["encoder.hash"] = cache_id(bilm)
        if current.get("encoder.pooling") == "auto":  # the pooling auto chose: auto on an encoder-only model is
            current["encoder.pooling"] = getattr(bilm, "pooling", "auto")  # first, as the runs before auto say
    run_dir, extending = choose_run_dir(run_dir, older, current, run, task_code_dir(task_package))
    results_path = run_dir / RESULTS_FILE
    if results_path.exists() and not extending:
        log.info("%s exists and was made by this configuration: nothing to do", results_path)
        return read_record(results_path)
    trainer = trainer_config(run, run.data.fraction)
    if extending:
        kept = apply_new_stopping_rule(run_dir, StoppingRule.of(trainer), current, run)
        if kept is not None:
            on_claimed(run_dir)
            return kept
    on_claimed(run_dir)
    return _train_and_record(run, run_dir, task_name, seed, device, trainer, bilm, bilm_info, started)


def _train_and_record(run: RunConfig, run_dir: Path, task_name: str, seed: int, device: torch.device,
                      trainer: TrainerConfig, bilm: Any, bilm_info: dict[str, Any] | None,
                      started: float) -> dict[str, Any]:
    """The computing half of a run that owns its directory: read, assemble, train, evaluate, write."""
    seed_everything(seed)
    torch.set_num_threads(int(run.runtime.threads) or 1)
    task = load_task(task_name)
    prepared = read_data(run.data, task, seed)
    if bilm_info is not None and run.encoder.bilm.name == "adapted":
        bilm, bilm_info = adapt_bilm(run, task, prepared, bilm_info, run_dir, device)
    model, collators, vocab = assemble(run, task, prepared, bilm, bilm_info, device, seed)

    logger = RunLogger(run, run_dir)

    def on_epoch(epoch: int, record: dict[str, Any]) -> None:
        logger.log({"train_loss": record["train_loss"], **{f"dev/{k}": v for k, v in record["dev"].items()}}, step=epoch)

    t0 = time.perf_counter()
    history = fit(model, task, prepared.splits["train"], prepared.splits["dev"], collators["train"],
                  collators["dev"], trainer, run_dir, seed, on_epoch,
                  extra={"vocab": vocab.words if vocab is not None else None})
    prepared.timings["train_seconds"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    metrics = evaluate_splits(model, task, prepared, collators, trainer, run_dir)
    prepared.timings["eval_seconds"] = time.perf_counter() - t1
    bilm_seconds = 0.0
    if bilm is not None:  # with cache=false the biLM runs inside every batch: count that time too
        bilm_seconds = prepared.cache.seconds_in_bilm if prepared.cache is not None else sum(
            source.seconds_in_bilm for sources in prepared.layer_sources.values() for source in sources.values())
    prepared.timings["bilm_seconds"] = bilm_seconds
    prepared.timings["total_seconds"] = time.perf_counter() - started
    results = write_run(run_dir, run, task, prepared, model, history, metrics)
    logger.summary({f"{s}/{k}": v for s, m in metrics.items() for k, v in m.items()})
    logger.finish()
    log.info("results: %s", json.dumps(metrics))
    return results
