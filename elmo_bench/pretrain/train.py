"""The biLM pretraining loop, as bilm-tf runs it, with atomic checkpoints and an exact resume.

One step = one window of ``unroll_steps`` tokens for each of the ``batch_size`` streams (forward and backward);
the LSTM state is carried (detached) from window to window. The run stops at a token budget (``max_tokens``, or
``epochs`` × corpus tokens): never endless. A checkpoint (model, optimizer, sampler RNG, torch RNG, data
position, carried LSTM state of the whole global batch) is written atomically every ``checkpoint_every_steps``
steps or ``checkpoint_every_s`` seconds and at the end; rerunning with the same ``out_dir`` resumes from it and
ends with the same weights as an uninterrupted run. Resuming with another ``batch_size`` is a recipe phase, not an
error: weights, optimizer, sampler, RNG and counters carry on, and the streams restart from zero state at the
checkpoint's place in the shuffled sentence order (recorded in the history; deterministic, so two phases run as
``max_tokens=N batch_size=B1`` then ``batch_size=B2`` reproduce exactly). ``max_train_seconds`` (optional) also stops the run cleanly
once that much training time is spent (a deadline), with the same checkpoint and export as at the budget.

Distributed: under ``torchrun`` (``WORLD_SIZE`` > 1) the model is wrapped in DistributedDataParallel (gloo on
CPU, nccl on GPU); every rank builds the same global batch and trains on its own ``batch_size / world`` rows;
the sampled-softmax candidates are the same on every rank (same sampler seed).
"""
from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

import torch
from torch import distributed as dist

from elmo_bench.base import checkpoints
from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.device import resolve_device
from elmo_bench.base.errors import DataError, TrainingError
from elmo_bench.bilm.window_lstm import set_direction_threads
from elmo_bench.pretrain.corpus import read_sentences
from elmo_bench.pretrain.data import Corpus, StreamBatcher, load_corpus
from elmo_bench.pretrain.export import export_lm
from elmo_bench.pretrain.language_model import LanguageModel, make_options, training_extra
from elmo_bench.pretrain.pretrain_config import PretrainConfig
from elmo_bench.pretrain.series import export_point

CHECKPOINT = "checkpoint.pt"


def _dist_info() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _maybe_init_distributed(device: torch.device) -> bool:
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        return True
    return False


def make_optimizer(params, cfg: PretrainConfig) -> torch.optim.Optimizer:
    """bilm-tf's Adagrad, or Adam (PretrainConfig admits only these two)."""
    if cfg.optimizer == "adagrad":
        return torch.optim.Adagrad(params, lr=cfg.lr, initial_accumulator_value=cfg.initial_accumulator)
    return torch.optim.Adam(params, lr=cfg.lr)


class Trainer:
    """Holds everything a step needs; ``run()`` trains to the budget and returns a summary dict."""

    def __init__(self, cfg: PretrainConfig, corpus: Corpus | None = None, device: str | None = None) -> None:
        self.cfg = cfg
        # auto | cpu | cuda | cuda:N; CUDA where there is none is a one-line ConfigError (elmo_bench.base.device)
        self.device = resolve_device(device or cfg.device or "auto", "pretrain.device")
        self.owns_group = _maybe_init_distributed(self.device)
        self.rank, self.world = _dist_info()
        if self.device.type == "cuda" and self.world > 1:
            self.device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        self.out_dir = Path(cfg.out_dir)
        if cfg.batch_size % self.world:
            raise ValueError(f"pretrain.batch_size {cfg.batch_size} must be divisible by the world size {self.world}")
        self.local_batch = cfg.batch_size // self.world
        self.corpus = corpus or load_corpus(list(cfg.train_files), cfg.vocab_file, cfg.min_count, cfg.max_vocab)
        seed = cfg.seed
        set_direction_threads(cfg.direction_threads)
        torch.manual_seed(seed + self.rank)
        vocab_size = len(self.corpus.vocab)
        self.options = make_options(cfg.model, training_extra(cfg, vocab_size))
        self.model = LanguageModel(self.options, vocab_size, cfg.num_sampled, cfg.dropout, seed=seed).to(self.device)
        if self.world > 1:
            self.ddp = torch.nn.parallel.DistributedDataParallel(
                self.model, device_ids=[self.device.index] if self.device.type == "cuda" else None)
        else:
            self.ddp = self.model
        self.optimizer = make_optimizer(self.model.parameters(), cfg)
        self.batcher = StreamBatcher(self.corpus, cfg.batch_size, cfg.unroll_steps, seed=seed, shuffle=cfg.shuffle)
        self.state = self.model.zero_state(cfg.batch_size)  # the global batch's carried state
        self.step, self.tokens_seen, self.train_seconds = 0, 0, 0.0
        self.loss_ema: float | None = None
        budget = cfg.max_tokens
        if not budget:
            if not cfg.epochs:
                raise ValueError("pretrain: set max_tokens or epochs (a run is never endless)")
            budget = int(cfg.epochs * self.corpus.n_tokens)
        self.max_tokens = int(budget)
        self.table_chars = self.corpus.table.chars
        self.table_vocab = self.corpus.table.to_vocab
        self.history: list[dict[str, Any]] = []

    # ---- one step ------------------------------------------------------------------------------------------
    def train_step(self) -> float:
        inputs, targets = self.batcher.next_batch()  # (2, global batch, T) type ids
        rows = slice(self.rank * self.local_batch, (self.rank + 1) * self.local_batch)
        inputs_t = torch.from_numpy(inputs[:, rows])
        types, inverse = torch.unique(inputs_t, return_inverse=True)
        chars = self.table_chars[types].long().to(self.device)
        target_ids = self.table_vocab[torch.from_numpy(targets[:, rows])].to(self.device)
        local_state = [(h[:, rows].detach(), c[:, rows].detach()) for h, c in self.state]
        self.model.train()
        loss, final = self.ddp(chars, inverse.to(self.device), target_ids, local_state)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        clip = self.cfg.grad_clip
        if clip:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip)
        self.optimizer.step()
        self._store_state(final, rows)
        self.step += 1
        self.tokens_seen += self.cfg.batch_size * self.cfg.unroll_steps
        value = float(loss.detach())
        if self.world > 1:
            t = torch.tensor([value], device=self.device)
            dist.all_reduce(t)
            value = float(t) / self.world
        return value

    def _store_state(self, final, rows: slice) -> None:
        new = []
        for (h, c), (h_local, c_local) in zip(self.state, final):
            h, c = h.clone(), c.clone()
            if self.world > 1:
                hs = [torch.empty_like(h_local) for _ in range(self.world)]
                cs = [torch.empty_like(c_local) for _ in range(self.world)]
                dist.all_gather(hs, h_local.detach().contiguous())
                dist.all_gather(cs, c_local.detach().contiguous())
                h, c = torch.cat(hs, dim=1), torch.cat(cs, dim=1)
            else:
                h[:, rows], c[:, rows] = h_local.detach(), c_local.detach()
            new.append((h, c))
        self.state = new

    # ---- checkpoints ---------------------------------------------------------------------------------------
    def checkpoint_path(self) -> Path:
        return self.out_dir / CHECKPOINT

    def save_checkpoint(self) -> None:
        rng_states = [torch.get_rng_state()]
        if self.world > 1:  # every rank's dropout RNG, so a distributed run resumes exactly too
            rng_states = [None] * self.world
            dist.all_gather_object(rng_states, torch.get_rng_state())
        if self.rank != 0:
            return
        payload = {
            "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
            "sampler": self.model.softmax.sampler.state(), "torch_rng": rng_states,
            "data": self.batcher.state(), "lstm_state": [(h.cpu(), c.cpu()) for h, c in self.state],
            "step": self.step, "tokens_seen": self.tokens_seen, "train_seconds": self.train_seconds,
            "loss_ema": self.loss_ema, "history": self.history, "vocab": self.corpus.vocab.tokens, "vocab_counts": self.corpus.vocab.counts,
        }
        checkpoints.save(self.checkpoint_path(), payload)  # atomic, with its integrity record
        self.export_series_point()

    def export_series_point(self) -> None:
        """The series point of the checkpoint just written or resumed from (``series_dir``; rank 0): a resume
        finishes an export the checkpoint's run was stopped in."""
        if self.cfg.series_dir and self.rank == 0:
            export_point(self.model, self.corpus.vocab, self.cfg.series_dir, {
                "step": self.step, "tokens_seen": self.tokens_seen, "train_seconds": self.train_seconds})

    def load_checkpoint(self) -> bool:
        path = self.checkpoint_path()
        if not path.exists():
            return False
        payload = checkpoints.load(path, "cpu", advice="the run stops here; delete it (or use another out_dir) "
                                                       "to pretrain from the start")
        if payload["vocab"] != self.corpus.vocab.tokens:
            raise DataError(f"{path}: checkpoint vocabulary differs from this corpus's; use another out_dir")
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        self.model.softmax.sampler.set_state(payload["sampler"])
        rng = payload["torch_rng"]
        rng = [rng] if isinstance(rng, torch.Tensor) else rng  # checkpoints of the first version: rank 0 only
        if len(rng) == self.world:  # same world size: every rank continues its own dropout stream
            torch.set_rng_state(rng[self.rank])
        self.step, self.tokens_seen = payload["step"], payload["tokens_seen"]
        self.train_seconds, self.loss_ema = payload["train_seconds"], payload["loss_ema"]
        self.history = payload.get("history", [])
        saved_batch = len(payload["data"]["forward"])
        if saved_batch == self.cfg.batch_size:
            self.batcher.set_state(payload["data"])
            self.state = [(h.to(self.device), c.to(self.device)) for h, c in payload["lstm_state"]]
        else:  # a new batch size (a recipe phase): same weights, optimizer and counters; the streams restart
            self.batcher.restart_at(payload["data"]["epoch"], payload["data"]["cursor"])
            self.history.append({"step": self.step, "tokens": self.tokens_seen, "event":
                                 f"batch_size {saved_batch} -> {self.cfg.batch_size}: streams restart at "
                                 f"epoch {payload['data']['epoch']} sentence {payload['data']['cursor']}, zero state"})
        return True

    # ---- the loop ------------------------------------------------------------------------------------------
    def run(self, progress: bool = True) -> dict[str, Any]:
        from tqdm import tqdm

        resumed = self.load_checkpoint() if self.cfg.resume else False
        if resumed:
            self.export_series_point()
        if self.rank == 0:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self.corpus.vocab.save(self.out_dir / "vocab.txt")
        every_steps = self.cfg.checkpoint_every_steps or 0  # null = 0 = never
        every_s = self.cfg.checkpoint_every_s or 0
        log_every = self.cfg.log_every
        bar = tqdm(total=self.max_tokens, initial=self.tokens_seen, unit="tok", unit_scale=True,
                   disable=not progress or self.rank != 0, desc="pretrain", mininterval=5.0)
        last_save = time.time()
        window_start, window_tokens = time.time(), 0
        max_seconds = self.cfg.max_train_seconds or float("inf")
        while self.tokens_seen < self.max_tokens and self.train_seconds < max_seconds:
            t0 = time.time()
            loss = self.train_step()
            self.train_seconds += time.time() - t0
            if not math.isfinite(loss):
                raise TrainingError(f"pretrain: loss became {loss} at step {self.step} (tokens seen "
                                    f"{self.tokens_seen}); lower pretrain.lr or check the corpus")
            self.loss_ema = loss if self.loss_ema is None else 0.98 * self.loss_ema + 0.02 * loss
            step_tokens = self.cfg.batch_size * self.cfg.unroll_steps
            window_tokens += step_tokens
            bar.update(step_tokens)
            if self.step % log_every == 0:
                rate = window_tokens / max(time.time() - window_start, 1e-9)
                bar.set_postfix(tok_s=f"{rate:.0f}", ppl=f"{math.exp(self.loss_ema):.1f}", refresh=False)
                self.history.append({"step": self.step, "tokens": self.tokens_seen, "loss_ema": self.loss_ema,
                                     "tokens_per_s": rate, "train_seconds": self.train_seconds})
                if self.rank == 0 and self.cfg.log_file:
                    with open(self.cfg.log_file, "a") as log:
                        log.write(json.dumps(self.history[-1]) + "\n")
                window_start, window_tokens = time.time(), 0
            due = (every_steps and self.step % every_steps == 0) or (every_s and time.time() - last_save >= every_s)
            if due:
                self.save_checkpoint()
                last_save = time.time()
        bar.close()
        self.save_checkpoint()
        summary = {"steps": self.step, "tokens_seen": self.tokens_seen, "train_seconds": self.train_seconds,
                   "final_loss_ema": self.loss_ema, "resumed": resumed, "world_size": self.world,
                   "vocab_size": len(self.corpus.vocab), "corpus_tokens": self.corpus.n_tokens}
        if self.rank == 0 and self.cfg.export_dir:
            export_lm(self.model, self.corpus.vocab, self.cfg.export_dir)
        if self.rank == 0:
            atomic_write_text(self.out_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
        return summary

    def close(self) -> None:
        if self.owns_group:
            dist.destroy_process_group()


def train(cfg: PretrainConfig, progress: bool = True) -> dict[str, Any]:
    """Pretrain to the budget (resuming from ``out_dir``'s checkpoint), export; returns the summary."""
    torch.set_num_threads(cfg.threads)
    trainer = Trainer(cfg)
    try:
        return trainer.run(progress)
    finally:
        trainer.close()


def heldout_sentences(paths, limit: int | None = None) -> list[list[str]]:
    out = []
    for sentence in read_sentences(paths):
        out.append(sentence)
        if limit and len(out) >= limit:
            break
    return out
