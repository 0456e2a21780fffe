"""Fine-tune an exported biLM on new text (e.g. a task's training sentences, the paper's Table 7), then export.

The architecture and vocabulary come from the exported model (``init_dir``: options.json, weights.hdf5 with its
``softmax/W``/``softmax/b``, vocab.txt); the unigram reference counts are recounted on the new text. Checkpoints
and resume work as in pretraining (a checkpoint in ``out_dir`` wins over the initial weights).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import h5py
import torch

from elmo_bench.base.errors import DataError
from elmo_bench.bilm.default import SHIPPED_DIR
from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.bilm.weights import load_weights
from elmo_bench.pretrain.data import load_corpus
from elmo_bench.pretrain.pretrain_config import PretrainConfig, PretrainModel
from elmo_bench.pretrain.train import Trainer


def model_config_from_options(options: BiLMOptions) -> PretrainModel:
    """The architecture of an exported biLM, as ``pretrain.model``."""
    return PretrainModel(filters=tuple(tuple(f) for f in options.filters), n_highway=options.n_highway,
                         char_dim=options.char_dim, activation=options.activation, n_layers=options.n_layers,
                         lstm_dim=options.lstm_dim, projection_dim=options.projection_dim,
                         cell_clip=options.cell_clip, proj_clip=options.proj_clip,
                         use_skip_connections=options.use_skip_connections)


def finetune(cfg: PretrainConfig, progress: bool = True) -> dict[str, Any]:
    """Continue LM training of ``cfg.init_dir``'s biLM (null: the shipped one) on ``cfg.train_files``, export.
    The architecture and vocabulary are the exported model's (``cfg.model`` and ``cfg.vocab_file`` are not read)."""
    torch.set_num_threads(cfg.threads)
    if not cfg.train_files:
        raise DataError("finetune-lm: pretrain.train_files is empty; give the task's text (one sentence a line)")
    init = Path(cfg.init_dir or SHIPPED_DIR)
    options = BiLMOptions.load(init / "options.json")
    cfg = dataclasses.replace(cfg, model=model_config_from_options(options), vocab_file=str(init / "vocab.txt"))
    corpus = load_corpus(list(cfg.train_files), cfg.vocab_file)
    trainer = Trainer(cfg, corpus=corpus)
    load_weights(trainer.model.bilm, init / "weights.hdf5")
    with h5py.File(init / "weights.hdf5", "r") as handle, torch.no_grad():
        if "softmax/W" not in handle:
            raise DataError(f"{init / 'weights.hdf5'}: no softmax/W dataset; cannot continue LM training")
        trainer.model.softmax.weight.copy_(torch.from_numpy(handle["softmax/W"][...]))
        trainer.model.softmax.bias.copy_(torch.from_numpy(handle["softmax/b"][...]))
    try:
        return trainer.run(progress)
    finally:
        trainer.close()
