"""The supervised loop shared by every task: early stopping on the dev metric, checkpoints, exact resume.

Devices: the task model lives on one device (``TaskModel.to``); every batch is built on the CPU by the collator
and moved to the model's device in ``TaskModel.forward``, under ``torch.autocast`` when the model was built with
``amp`` (elmo_bench.base.device). Checkpoints are loaded onto the model's device, so a run resumes on another device.
Each checkpoint holds the model, the optimiser, the task's own state (``Task.state_dict``: label sets, genre lists)
and the engine's ``extra`` state (the GloVe vocabulary), so a resumed or re-evaluated run decodes identically.

Determinism: every epoch reseeds torch with ``seed * 1000 + epoch`` and shuffles with the same number, so a run
resumed from the checkpoint of epoch k continues exactly as the uninterrupted run would have. Checkpoints and the
best model are written atomically (temp + rename): a kill at any moment leaves either the previous or the new one.
"""
from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
from torch import nn
from tqdm import tqdm

from elmo_bench.base import checkpoints
from elmo_bench.base.device import autocast, normalise_amp
from elmo_bench.base.errors import TrainingError
from elmo_bench.data.batch import Batch
from elmo_bench.engine.collate import Collator, length_batches
from elmo_bench.engine.lr_plateau import LrPlateau
from elmo_bench.engine.trainer_config import TrainerConfig
from elmo_bench.modules.token_embedders import TaskEmbedder
from elmo_bench.records.stopping import StoppingRule
from elmo_bench.tasks.api import Example, Task

log = logging.getLogger(__name__)
#: what a run does with a corrupt checkpoint.pt / best.pt: nothing; the user decides
RESTART_ADVICE = "the run stops here; delete the run directory's checkpoint.pt and best.pt to train it from the start"


class TaskModel(nn.Module):
    """Embedder (GloVe table + ELMo mixes) followed by the task head, on one device, optionally under autocast.

    ``amp`` (``off`` | ``bf16`` | ``fp16``): the precision of the forward pass (elmo_bench.base.device.autocast).
    """

    def __init__(self, embedder: TaskEmbedder, head: nn.Module, amp: str = "off") -> None:
        super().__init__()
        self.embedder, self.head = embedder, head
        self.amp = normalise_amp(amp)

    @property
    def device(self) -> torch.device:
        """The device of the model's parameters (the CPU for a model without any)."""
        first = next(self.parameters(), None)
        return first.device if first is not None else torch.device("cpu")

    def forward(self, batch: Batch) -> dict[str, torch.Tensor]:
        device = self.device
        with autocast(device, self.amp):
            return self.head(self.embedder(batch.to(device)))


def make_optimizer(model: nn.Module, cfg: TrainerConfig) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    eps = {} if cfg.eps is None else {"eps": cfg.eps}
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay, **eps)
    if cfg.optimizer == "adadelta":
        rho = {} if cfg.rho is None else {"rho": cfg.rho}
        return torch.optim.Adadelta(params, lr=cfg.lr, weight_decay=cfg.weight_decay, **rho, **eps)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    raise ValueError(f"trainer.optimizer expected adam, adadelta or sgd, found {cfg.optimizer!r}")


@torch.no_grad()
def predict(model: TaskModel, task: Task, examples: Sequence[Example], collator: Collator,
            batch_size: int) -> list[Any]:
    """Predictions in the order of ``examples``."""
    model.eval()
    predictions: list[Any] = [None] * len(examples)
    for rows in length_batches(examples, task.text_fields, batch_size, shuffle=False, seed=0):
        chunk = [examples[i] for i in rows]
        output = model(collator(chunk))
        for i, prediction in zip(rows, task.decode(output, chunk)):
            predictions[i] = prediction
    return predictions


def evaluate(model: TaskModel, task: Task, examples: Sequence[Example], collator: Collator,
             batch_size: int) -> tuple[dict[str, float], list[Any]]:
    predictions = predict(model, task, examples, collator, batch_size)
    return task.metric(predictions, examples), predictions


def _save(path: Path, state: dict[str, Any]) -> None:
    checkpoints.save(path, state)  # atomic, with its integrity record (<name>.sha256)


def _resume(checkpoint_path: Path, model: TaskModel, task: Task, optimizer: torch.optim.Optimizer,
            scaler: torch.amp.GradScaler) -> tuple[list[dict[str, Any]], float, int, int]:
    """Restore model, optimiser, task state and loss scaler from ``checkpoint.pt``; returns (history, best dev
    score, best epoch, the epoch to start with)."""
    state = checkpoints.load(checkpoint_path, model.device, advice=RESTART_ADVICE)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if "task" in state:
        task.load_state_dict(state["task"])
    if state.get("scaler"):
        scaler.load_state_dict(state["scaler"])
    log.info("resuming from %s after epoch %d (best %s %.3f)", checkpoint_path, state["epoch"], task.main_metric,
             state["best"])
    return state["history"], state["best"], state["best_epoch"], state["epoch"] + 1


def _train_epoch(model: TaskModel, task: Task, train: Sequence[Example], collator: Collator,
                 optimizer: torch.optim.Optimizer, scaler: torch.amp.GradScaler, cfg: TrainerConfig, seed: int,
                 epoch: int) -> float:
    """One pass over ``train`` in length-grouped batches shuffled by ``seed * 1000 + epoch`` (torch reseeded with
    the same number, so a resumed run continues exactly); returns the mean training loss. A non-finite loss is a
    TrainingError naming the epoch, the step and the batch's first examples."""
    torch.manual_seed(seed * 1000 + epoch)
    model.train()
    total_loss, batches = 0.0, 0
    order = length_batches(train, task.text_fields, cfg.batch_size, shuffle=True, seed=seed * 1000 + epoch)
    bar = tqdm(order, desc=f"epoch {epoch}", unit="batch", disable=not cfg.progress, leave=False)
    for step, rows in enumerate(bar):
        output = model(collator([train[i] for i in rows]))
        loss = output["loss"] + model.embedder.penalty()
        if not torch.isfinite(loss):
            raise TrainingError(f"training stopped: loss is {loss.item()} at epoch {epoch}, step {step} "
                                f"(batch of examples {[train[i].get('id', i) for i in rows][:5]}...); "
                                f"check the inputs and the biLM weights, or lower trainer.lr")
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        if cfg.grad_clip:
            scaler.unscale_(optimizer)  # clip the true gradients (a no-op without fp16 scaling)
            nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        scaler.step(optimizer)
        scaler.update()
        total_loss += loss.item()
        batches += 1
        bar.set_postfix(loss=f"{total_loss / batches:.4f}")
    return total_loss / max(batches, 1)


def _epoch_rate(plateau: LrPlateau | None, optimizer: torch.optim.Optimizer,
                history: Sequence[dict[str, Any]]) -> float | None:
    """The next epoch's learning rate under ``plateau`` (replayed from the dev scores so far, so a resumed run takes
    the uninterrupted run's rate), set on every parameter group; None without a schedule (the rate stays put)."""
    if plateau is None:
        return None
    rate = plateau.next_rate([record["dev_metric"] for record in history])
    for group in optimizer.param_groups:
        group["lr"] = rate
    return rate


def fit(model: TaskModel, task: Task, train: Sequence[Example], dev: Sequence[Example],
        train_collator: Collator, dev_collator: Collator, cfg: TrainerConfig, run_dir: Path, seed: int,
        on_epoch: Callable[[int, dict[str, Any]], None] | None = None,
        extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train with early stopping on ``task.main_metric``; resumes from ``run_dir/checkpoint.pt`` if present.

    ``checkpoint.pt`` and ``best.pt`` hold ``model`` (state dict), ``task`` (``task.state_dict()``), ``extra``
    (whatever the caller needs to rebuild the model, e.g. the GloVe vocabulary) and ``epoch``; the checkpoint also
    the optimiser (and the fp16 loss scaler) and the history. Resuming restores the task's state too.

    Training stops after ``cfg.patience`` epochs without a better dev score (strictly higher than the best so far),
    but never before ``cfg.min_epochs`` epochs, or at ``cfg.max_epochs``, or when the plateau schedule
    (``cfg.lr_plateau_*``, elmo_bench.engine.lr_plateau) brought the rate below its minimum; a non-finite loss stops
    it with a TrainingError naming the epoch and step. With the schedule each history record has its ``lr``.
    Leaves the best model's weights in ``model`` and returns the history: one record per epoch with ``epoch``,
    ``train_loss``, ``dev`` (all dev metrics), ``dev_metric`` (the main one), ``train_seconds`` and ``seconds``
    (training plus the dev evaluation), with ``best_epoch``, ``best_dev`` and ``stopped_by`` ("patience", "cap" or
    "min_lr").
    """
    checkpoint_path, best_path = run_dir / "checkpoint.pt", run_dir / "best.pt"
    rule, plateau, stopped_by = StoppingRule.of(cfg), LrPlateau.of(cfg), None
    optimizer = make_optimizer(model, cfg)
    device = model.device
    # fp16 gradients underflow without loss scaling; bf16 has fp32's range and needs none
    scaler = torch.amp.GradScaler(device.type, enabled=model.amp == "fp16")
    saved = {"task": task.state_dict(), "extra": dict(extra or {})}
    history: list[dict[str, Any]] = []
    best, best_epoch, start_epoch = -math.inf, -1, 0
    if checkpoint_path.exists():
        history, best, best_epoch, start_epoch = _resume(checkpoint_path, model, task, optimizer, scaler)
    for epoch in range(start_epoch, cfg.max_epochs):
        if rule.stops_before(epoch, best_epoch):
            break
        rate = _epoch_rate(plateau, optimizer, history)
        if plateau is not None and rate is not None and plateau.spent(rate):
            stopped_by = "min_lr"
            break
        started = time.perf_counter()
        train_loss = _train_epoch(model, task, train, train_collator, optimizer, scaler, cfg, seed, epoch)
        train_seconds = time.perf_counter() - started
        dev_metrics, _ = evaluate(model, task, dev, dev_collator, cfg.eval_batch_size)
        score = dev_metrics[task.main_metric]
        record = {"epoch": epoch, "train_loss": train_loss, "dev": dev_metrics,
                  "dev_metric": score, "train_seconds": train_seconds, "seconds": time.perf_counter() - started,
                  **({} if rate is None else {"lr": rate})}
        history.append(record)
        log.info("epoch %d: loss %.4f dev %s %.3f", epoch, record["train_loss"], task.main_metric, score)
        if score > best:
            best, best_epoch = score, epoch
            _save(best_path, {"model": model.state_dict(), "epoch": epoch, **saved})
        _save(checkpoint_path, {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                                "history": history, "best": best, "best_epoch": best_epoch, **saved,
                                "scaler": scaler.state_dict() if scaler.is_enabled() else None})
        if on_epoch is not None:
            on_epoch(epoch, record)
    if best_path.exists():
        model.load_state_dict(checkpoints.load(best_path, device, advice=RESTART_ADVICE)["model"])
    return {"history": history, "best_epoch": best_epoch, "best_dev": best,
            "stopped_by": stopped_by or rule.stopped_by(len(history), best_epoch)}
