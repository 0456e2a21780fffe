"""What ``elmo-bench plan`` measures on a few sample batches (elmo_bench.commands.plan holds the formulas): the
splits' sizes, a sample task model, its FLOPs per token under ``torch.utils.flop_counter`` and the peak memory of
one training step (CUDA's allocator statistic, or on a CPU the tensors saved for backward plus parameters,
gradients and optimiser state)."""
from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.encoders.costs import segment_positions
from elmo_bench.engine.collate import length_batches
from elmo_bench.engine.experiment import build_model, trainer_config
from elmo_bench.engine.fractions import nested_subset
from elmo_bench.engine.loop import make_optimizer
from elmo_bench.engine.prepare import Prepared, read_checked_splits
from elmo_bench.engine.run_config import RunConfig
from elmo_bench.modules.token_embedders import WordVocabulary

# ------------------------------------------------------------------------------------------------------------ data

@dataclass
class SplitSizes:
    examples: int
    tokens: int                  # every text field of every example
    positions: int               # the biLM positions of the distinct sequences (cache fill)
    distinct_tokens: int         # the cache's rows


def split_sizes(task: Any, examples: Sequence[dict], max_segment: int) -> SplitSizes:
    """Sizes of one split as the engine sees it (the cache deduplicates each text field's sequences)."""
    tokens = positions = distinct = 0
    for name in task.text_fields:
        sequences = [e[name] for e in examples]
        tokens += sum(len(s) for s in sequences)
        for seq in {tuple(s) for s in sequences}:
            distinct += len(seq)
            positions += segment_positions(len(seq), max_segment)
    return SplitSizes(len(examples), tokens, positions, distinct)


def read_splits(run: RunConfig, task: Any) -> dict[str, list[dict]] | None:
    """The configured data's splits as a run reads and checks them (engine.prepare.read_checked_splits; train
    cut to ``data.fraction`` as the engine does), or None when they are not here (a hub dataset offline, a licensed
    file not downloaded). Data that is here but bad (an empty split, a malformed file) is the run's one line."""
    try:
        splits, _ = read_checked_splits(run.data, task)
    except (DataError, ConfigError, OSError):
        if data_is_here(run.data.plain()):
            raise
        return None
    splits["train"] = nested_subset(splits["train"], run.data.fraction, int(run.runtime.seed))
    return splits


def data_is_here(data: dict[str, Any]) -> bool:
    """Local data whose every configured split path exists (so a failure to read it is the data's fault)."""
    paths = [data[k] for k in ("train", "dev", "test") if data.get(k)]
    return data.get("source") == "local" and bool(paths) and all(Path(str(p)).exists() for p in paths)


# ----------------------------------------------------------------------------------------------------- measurement

class ShapeLayers:
    """A stand-in for the activation cache: random (L+1, n, dim) layers of the right shape for every sequence
    (FLOPs and memory do not depend on the values, and the plan never runs the biLM)."""

    def __init__(self, sequences: Sequence[Sequence[str]], num_layers: int, dim: int) -> None:
        self.lengths = [len(s) for s in sequences]
        self.num_layers, self.dim = num_layers, dim

    def __len__(self) -> int:
        return len(self.lengths)

    def get(self, index: int) -> np.ndarray:
        rng = np.random.default_rng(index)
        return rng.standard_normal((self.num_layers, self.lengths[index], self.dim), dtype=np.float32)


def _counting_backends() -> ExitStack:
    """oneDNN and cuDNN off: their fused RNN kernels are invisible to FlopCounterMode, the native ones are not."""
    import warnings

    stack = ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.filterwarnings("ignore", message="TF32 acceleration on top of oneDNN")
    stack.enter_context(torch.backends.mkldnn.flags(enabled=False))
    stack.enter_context(torch.backends.cudnn.flags(enabled=False))
    return stack


def _optimizer_state_tensors(optimizer: str) -> int:
    return {"adam": 2, "adadelta": 2, "sgd": 0}.get(optimizer, 2)


@dataclass
class Measured:
    head_params: int
    train_flops_per_token: float
    eval_flops_per_token: float
    peak_memory_bytes: int
    memory_method: str
    sample_batches: int
    sample_tokens: int


@dataclass
class SampleModel:
    """A run's model over a sample of its train split, with that sample's batches (indices into ``sample``)."""

    model: Any
    collator: Any
    sample: list[dict]
    batches: list[list[int]]
    trainer: Any


def sample_model(run: RunConfig, task: Any, train: list[dict], num_layers: int, elmo_dim: int, glove_dim: int,
                 n_batches: int, seed: int = 0) -> SampleModel:
    """The run's model (experiment.build_model, on the CPU) over ``n_batches`` shuffled train batches of the run's
    batch size; biLM layers from :class:`ShapeLayers` and a random GloVe table of the configured width (the values
    and the vocabulary change neither FLOPs nor memory)."""
    torch.manual_seed(seed)
    trainer = trainer_config(run, 1.0)
    batches = length_batches(train, task.text_fields, trainer.batch_size, shuffle=True, seed=seed)[:n_batches]
    rows = sorted({i for b in batches for i in b})
    sample = [dict(train[i], _index=k) for k, i in enumerate(rows)]
    where = {i: k for k, i in enumerate(rows)}
    batches = [[where[i] for i in b] for b in batches]
    use_elmo = bool(run.embedder.elmo)
    prepared = Prepared({"train": sample}, len(sample), 1.0, num_layers=num_layers if use_elmo else 0,
                        elmo_dim=elmo_dim if use_elmo else 0)
    if use_elmo:
        prepared.layer_sources["train"] = {f: ShapeLayers([e[f] for e in sample], num_layers, elmo_dim)
                                           for f in task.text_fields}
    glove_table = None
    if run.embedder.glove:
        words = sorted({w for e in sample for f in task.text_fields for w in e[f]})
        glove_table = (WordVocabulary(words), torch.randn(len(words) + 2, glove_dim) * 0.1)
    model, collators, _ = build_model(run, task, prepared, seed, glove_table=glove_table)
    return SampleModel(model, collators["train"], sample, batches, trainer)


def _cuda_peak(model: Any, batch: Any, trainer: Any, device: torch.device) -> int:
    """torch.cuda.max_memory_allocated over one training step of ``batch``: forward, backward, optimiser step."""
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    optimizer = make_optimizer(model, trainer)
    output = model(batch)
    (output["loss"] + model.embedder.penalty()).backward()
    optimizer.step()                                 # the optimiser's state is allocated on its first step
    peak = torch.cuda.max_memory_allocated(device)
    model.zero_grad(set_to_none=True)
    return int(peak)


def _recording_bytes(saved: dict[tuple[Any, int], int]) -> Callable[[torch.Tensor], torch.Tensor]:
    """A saved_tensors_hooks pack hook that records each saved tensor's bytes in ``saved``, keyed by storage (a
    storage saved twice counts once)."""
    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.is_sparse:                          # no storage of its own: its indices and values
            saved[(t.device, id(t))] = t._indices().nbytes + t._values().nbytes
            return t
        storage = t.untyped_storage()
        saved[(t.device, storage.data_ptr())] = storage.nbytes()
        return t

    return pack


def measure_model(run: RunConfig, task: Any, train: list[dict], num_layers: int, elmo_dim: int, glove_dim: int,
                  device: torch.device, n_batches: int, seed: int = 0) -> Measured:
    """FLOPs per token (train: forward + backward; eval: forward) and peak memory of the run's model on
    ``n_batches`` sample batches (:func:`sample_model`), on ``device``."""
    built = sample_model(run, task, train, num_layers, elmo_dim, glove_dim, n_batches, seed)
    model, sample, batches, trainer = built.model, built.sample, built.batches, built.trainer
    collators = {"train": built.collator}
    head_params = sum(p.numel() for p in model.head.parameters() if p.requires_grad)
    model.to(device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    grad_bytes = sum(p.numel() * p.element_size() for p in trainable)
    state_bytes = _optimizer_state_tensors(trainer.optimizer) * grad_bytes

    from torch.utils.flop_counter import FlopCounterMode

    train_flops = eval_flops = tokens = 0
    peak = 0
    for rows_ in batches:
        batch = collators["train"]([sample[i] for i in rows_])
        tokens += sum(int(f.mask.sum()) for f in batch.fields.values())
        model.train()
        saved: dict[tuple[Any, int], int] = {}
        pack = _recording_bytes(saved)
        if device.type == "cuda":                     # memory first, with the kernels a run uses (cuDNN on)
            peak = max(peak, _cuda_peak(model, batch, trainer, device))
        with _counting_backends(), FlopCounterMode(display=False) as counter, \
                torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            output = model(batch)
            (output["loss"] + model.embedder.penalty()).backward()
        train_flops += counter.get_total_flops()
        if device.type != "cuda":
            params = {(p.device, p.untyped_storage().data_ptr()) for p in model.parameters()}
            activations = sum(n for key, n in saved.items() if key not in params)
            peak = max(peak, activations + param_bytes + grad_bytes + state_bytes)
        model.zero_grad(set_to_none=True)
        del output
        model.eval()
        with torch.no_grad(), _counting_backends(), FlopCounterMode(display=False) as counter:
            model(batch)
        eval_flops += counter.get_total_flops()
    method = ("torch.cuda.max_memory_allocated over forward, backward and the optimiser step"
              if device.type == "cuda" else
              "saved-for-backward tensors (saved_tensors_hooks, by storage) + parameters + gradients + optimiser state")
    return Measured(head_params, train_flops / max(tokens, 1), eval_flops / max(tokens, 1), peak, method,
                    len(batches), tokens)


def glove_dim(run: RunConfig) -> int:
    """GloVe width: the file's first line when readable, 300 (glove.840B.300d) for an absent file, 50 for kumo."""
    if not run.embedder.glove:
        return 0
    if run.embedder.glove_source == "kumo":
        return 50
    path = run.embedder.glove_path
    if path and Path(str(path)).exists():
        import gzip

        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(str(path), "rt", encoding="utf-8") as handle:
            fields = handle.readline().rstrip("\n").split(" ")
        return int(fields[1]) if len(fields) == 2 else len(fields) - 1
    return 300
