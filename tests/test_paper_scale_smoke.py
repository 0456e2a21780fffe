"""Paper-size smoke runs: every Table 1 task with ``head=paper`` over a random biLM of the public ELMo size (4096
cells, 512 projections, 2048 char filters, 2 highway layers; elmo_bench.bilm.public) trains two optimiser steps
through the engine (read_data → prepare_layers → build_model → fit) on a handful of real examples and decodes them.

Why: the paper heads had only been built and counted (tests/test_paper_presets.py); these runs show that each one
trains at its real size on the 1024-d ELMo layers: a finite loss, a finite gradient on every trainable parameter,
predictions for every dev example. The biLM (375 MiB of random weights) is written and loaded once per module.
On the CPU by default; ``ELMO_BENCH_TEST_DEVICE=cuda`` (and ``ELMO_BENCH_TEST_AMP=bf16``) runs the same steps on a
GPU, as scripts/gpu_check.sh does.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
import torch

from elmo_bench.bilm.public import write_random_bilm
from elmo_bench.encoders.bilm.encoder import load_bilm_info
from elmo_bench.engine.collate import length_batches
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import build_model, load_task, trainer_config
from elmo_bench.engine.loop import fit, predict
from elmo_bench.engine.prepare import prepare_layers, read_data
from elmo_bench.tasks.api import Example
from tests.conftest import DATA
from tests.engine_helpers import compose_run

#: task → the data it reads here (default_<task>: the local data of ../shared/data) and that data's folder
LOCAL_DATA = {"ner": "conll2003", "sst": "sst", "snli": "snli", "squad": "squad", "srl": "srl/conll05st-release",
              "coref": "coref/litbank"}
DEVICE = os.environ.get("ELMO_BENCH_TEST_DEVICE", "cpu")
AMP = os.environ.get("ELMO_BENCH_TEST_AMP", "off")
TRAIN, DEV = 4, 2             # examples: batch size 2 (coref 1 document, its paper batch) gives two steps
COREF_SENTENCES = 3           # coref documents are cut to their first sentences: a 2,000-token paper-size
                              # coref graph (250 antecedents per span) would need gigabytes


@pytest.fixture(scope="module")
def paper_bilm(tmp_path_factory) -> tuple[list[str], object, dict]:
    """The overrides that select the random public-size biLM, the loaded biLM and its record (shared by all)."""
    options, weights = write_random_bilm(tmp_path_factory.mktemp("paper_bilm"), seed=0)
    overrides = ["bilm=custom", f"bilm.options={options}", f"bilm.weights={weights}"]
    cfg = compose_run(tmp_path_factory.mktemp("compose"), "task=ner", *overrides, tiny=False)
    bilm, info = load_bilm_info(run_config(cfg).encoder.bilm)
    bilm.to(DEVICE)
    assert (info["layers"], info["dim"], bilm.options.lstm_dim, bilm.options.n_filters) == (3, 1024, 4096, 2048)
    return overrides, bilm, info


def _cut_document(doc: Example, sentences: int) -> Example:
    """A coref document's first ``sentences`` sentences, with the mentions that lie inside them."""
    end = sum(1 for s in doc["sentence_ids"] if s < sentences)
    clusters = [[(a, b) for a, b in cluster if b < end] for cluster in doc["clusters"]]
    return {**doc, "tokens": doc["tokens"][:end], "sentence_ids": doc["sentence_ids"][:end],
            "speakers": doc["speakers"][:end] if doc.get("speakers") else doc.get("speakers"),
            "clusters": [c for c in clusters if c]}


def _handful(name: str, splits: dict[str, list[Example]]) -> dict[str, list[Example]]:
    """TRAIN train and DEV dev examples (re-indexed: ``_index`` is the row in the split's layer source)."""
    out = {"train": splits["train"][:TRAIN], "dev": splits["dev"][:DEV]}
    if name == "coref":
        out = {k: [_cut_document(d, COREF_SENTENCES) for d in v[:2]] for k, v in splits.items() if k in out}
    for examples in out.values():
        for index, example in enumerate(examples):
            example["_index"] = index
    return out


@pytest.mark.parametrize("name", ["ner", "sst", "snli", "squad", "srl", "coref"])
def test_paper_head_trains_two_steps_on_the_public_size_bilm(name: str, paper_bilm, tmp_path: Path) -> None:
    if not (DATA / LOCAL_DATA[name]).exists():
        pytest.skip(f"../shared/data/{LOCAL_DATA[name]} not present (the real examples this smoke run trains on)")
    overrides, bilm, info = paper_bilm
    batch = 1 if name == "coref" else 2
    cfg = compose_run(tmp_path, f"task={name}", "head=paper", "embedder=glove_elmo", *overrides,
                      "trainer.max_epochs=1", f"trainer.batch_size={batch}", "trainer.eval_batch_size=2", f"device={DEVICE}",
                      f"amp={AMP}", tiny=False)
    run = run_config(cfg)
    task = load_task(name)
    prepared = read_data(run.data, task, seed=1)                       # the full splits: labels fitted on all of them
    prepared.splits = _handful(name, prepared.splits)
    train, dev = prepared.splits["train"], prepared.splits["dev"]
    assert len(length_batches(train, task.text_fields, batch, shuffle=True, seed=1000)) == 2
    prepare_layers(run, task, prepared, bilm, info)               # the activation cache, in tmp_path
    model, collators, _ = build_model(run, task, prepared, seed=1)
    assert model.embedder.elmo_dim == 1024
    model.to(DEVICE)

    history = fit(model, task, train, dev, collators["train"], collators["dev"], trainer_config(run, 1.0),
                  tmp_path, seed=1)

    state = torch.load(tmp_path / "checkpoint.pt", weights_only=True, map_location="cpu")
    assert {int(s["step"]) for s in state["optimizer"]["state"].values()} == {2}   # two optimiser steps
    assert math.isfinite(history["history"][0]["train_loss"])
    missing = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    assert not missing, f"{name}: no gradient reached {missing}"
    bad = [n for n, p in model.named_parameters() if p.requires_grad and not torch.isfinite(p.grad).all()]
    assert not bad, f"{name}: non-finite gradient in {bad}"
    predictions = predict(model, task, dev, collators["dev"], 2)
    assert len(predictions) == len(dev) and all(p is not None for p in predictions)
    metrics = task.metric(predictions, dev)
    assert metrics and all(math.isfinite(v) for v in metrics.values())
