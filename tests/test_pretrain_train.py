"""biLM pretraining on invented tiny corpora: windows, learning, export, exact resume, 2-process DDP."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.weights import load_bilm
from elmo_bench.pretrain.data import StreamBatcher, load_corpus
from elmo_bench.pretrain.export import export_lm
from elmo_bench.pretrain.perplexity import evaluate, load_lm
from elmo_bench.pretrain.pretrain_config import PretrainConfig
from elmo_bench.pretrain.train import Trainer, train

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pretrain_helpers import grammar_sentences, tiny_config, write_lines  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def test_windows_carry_streams_and_reverse_sentences(tmp_path):
    corpus = load_corpus([str(write_lines(tmp_path / "c.txt", ["a b", "c d e", "f"]))])
    batcher = StreamBatcher(corpus, batch=2, unroll=3, shuffle=False)
    name = lambda ids: [corpus.table.types[i] for i in ids]  # noqa: E731
    inputs, targets = batcher.next_batch()
    assert name(inputs[0, 0]) == ["<S>", "a", "b"] and name(targets[0, 0]) == ["a", "b", "</S>"]
    assert name(inputs[1, 0]) == ["</S>", "b", "a"] and name(targets[1, 0]) == ["b", "a", "<S>"]
    assert name(inputs[0, 1]) == ["<S>", "c", "d"] and name(targets[0, 1]) == ["c", "d", "e"]
    inputs, targets = batcher.next_batch()
    assert name(inputs[0, 0]) == ["</S>", "<S>", "f"] and name(targets[0, 0]) == ["<S>", "f", "</S>"]
    assert name(inputs[1, 0]) == ["<S>", "</S>", "f"] and name(targets[1, 0]) == ["</S>", "f", "<S>"]
    # Row 1 ran out of sentences: epoch 1 starts over (no shuffle) with "a b".
    assert name(inputs[0, 1]) == ["e", "</S>", "<S>"] and name(targets[0, 1]) == ["</S>", "<S>", "a"]
    assert batcher.epoch == 1


def test_loss_falls_and_heldout_perplexity_beats_unigram(tmp_path):
    train_file = write_lines(tmp_path / "train.txt", grammar_sentences(400, seed=0))
    held = [s.split() for s in grammar_sentences(40, seed=1)]
    cfg = tiny_config(train_file, tmp_path / "run", max_tokens=8 * 6 * 300)
    trainer = Trainer(cfg)
    losses = [trainer.train_step() for _ in range(300)]
    assert np.mean(losses[-30:]) < np.mean(losses[:30]) - 0.5
    export_lm(trainer.model, trainer.corpus.vocab, tmp_path / "export")
    result = evaluate(*load_lm(tmp_path / "export/options.json", tmp_path / "export/weights.hdf5",
                               tmp_path / "export/vocab.txt"), held)
    assert result["tokens"] == sum(len(s) + 1 for s in held)
    assert result["forward"] < 0.6 * result["unigram"] and result["backward"] < 0.6 * result["unigram"]
    assert result["average"] == pytest.approx((result["forward"] + result["backward"]) / 2)


def test_export_then_load_gives_the_same_activations(tmp_path):
    train_file = write_lines(tmp_path / "train.txt", grammar_sentences(50, seed=0))
    trainer = Trainer(tiny_config(train_file, tmp_path / "run"))
    for _ in range(5):
        trainer.train_step()
    paths = export_lm(trainer.model, trainer.corpus.vocab, tmp_path / "export")
    loaded = load_bilm(paths["options"], paths["weights"])
    chars = batch_to_ids([["the", "cat", "sat", "."], ["an", "unseen", "word"]])
    trainer.model.eval()
    with torch.no_grad():
        want = trainer.model.bilm(chars)
        got = loaded(chars)
    assert torch.allclose(got.layers, want.layers, atol=1e-6) and torch.equal(got.mask, want.mask)
    options = json.loads(paths["options"].read_text())
    assert options["n_tokens_vocab"] == len(trainer.corpus.vocab) and options["char_cnn"]["n_characters"] == 262


def _final_params(out_dir: Path) -> dict[str, torch.Tensor]:
    return torch.load(out_dir / "checkpoint.pt", map_location="cpu", weights_only=True)["model"]


def test_killed_and_resumed_run_equals_uninterrupted_run(tmp_path):
    train_file = write_lines(tmp_path / "train.txt", grammar_sentences(200, seed=0))
    steps = 60
    common = dict(max_tokens=8 * 6 * steps, dropout=0.2, checkpoint_every_steps=1)
    train(tiny_config(train_file, tmp_path / "straight", **common), progress=False)

    cfg = tiny_config(train_file, tmp_path / "killed", **common)
    code = ("import json, sys; from elmo_bench.pretrain.train import train; from elmo_bench.pretrain.pretrain_config "
            "import PretrainConfig; train(PretrainConfig.of(json.loads(sys.argv[1])), False)")
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", code, json.dumps(cfg.mapping())], env=env)
    checkpoint = tmp_path / "killed" / "checkpoint.pt"
    killed_at = None
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if checkpoint.exists():
            step = torch.load(checkpoint, map_location="cpu", weights_only=True)["step"]
            if step >= 3:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                killed_at = torch.load(checkpoint, map_location="cpu", weights_only=True)["step"]
                break
        time.sleep(0.01)
    assert killed_at is not None and killed_at < steps, f"the run was not killed mid-way (checkpoint {killed_at})"
    summary = train(cfg, progress=False)
    assert summary["resumed"] and summary["steps"] == steps
    straight, resumed = _final_params(tmp_path / "straight"), _final_params(tmp_path / "killed")
    assert all(torch.equal(straight[k], resumed[k]) for k in straight)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ddp_worker(rank: int, world: int, port: int, cfg: PretrainConfig) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    train(cfg, progress=False)


def test_two_process_gloo_run_matches_one_process_run(tmp_path):
    import torch.multiprocessing as mp

    train_file = write_lines(tmp_path / "train.txt", grammar_sentences(100, seed=0))
    common = dict(max_tokens=8 * 6 * 15, batch_size=8)
    one = tiny_config(train_file, tmp_path / "one", **common)
    two = tiny_config(train_file, tmp_path / "two", **common)
    train(one, progress=False)
    mp.spawn(_ddp_worker, args=(2, _free_port(), two), nprocs=2, join=True)
    a, b = _final_params(tmp_path / "one"), _final_params(tmp_path / "two")
    assert all(torch.allclose(a[k], b[k], atol=2e-5) for k in a)
    assert json.loads((tmp_path / "two/summary.json").read_text())["world_size"] == 2
    assert json.loads((tmp_path / "one/summary.json").read_text())["steps"] == 15


def test_export_from_checkpoint_matches_export_of_the_live_model(tmp_path):
    from elmo_bench.pretrain.export import export_checkpoint

    train_file = write_lines(tmp_path / "train.txt", grammar_sentences(50, seed=0))
    cfg = tiny_config(train_file, tmp_path / "run", max_tokens=8 * 6 * 4)
    trainer = Trainer(cfg)
    trainer.run(progress=False)
    live = export_lm(trainer.model, trainer.corpus.vocab, tmp_path / "live")
    saved = export_checkpoint(tmp_path / "run/checkpoint.pt", cfg, tmp_path / "saved")
    import h5py

    with h5py.File(live["weights"], "r") as a, h5py.File(saved["weights"], "r") as b:
        names = []
        a.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
        assert "softmax/W" in names and "unigram/counts" in names
        assert all(np.array_equal(a[n][...], b[n][...]) for n in names)
    assert saved["vocab"].read_text() == live["vocab"].read_text()


def test_batch_size_phase_keeps_weights_and_restarts_streams_deterministically(tmp_path):
    """Resuming with another batch_size (a recipe phase): step/token counters, weights and optimizer carry on, the
    streams restart from zero state at the checkpoint's sentence, the history records it, and the two-phase run is
    reproducible."""
    train_file = write_lines(tmp_path / "train.txt", grammar_sentences(120, seed=0))

    def two_phases(out: Path) -> Trainer:
        train(tiny_config(train_file, out, batch_size=8, max_tokens=8 * 6 * 10), progress=False)
        second = Trainer(tiny_config(train_file, out, batch_size=4, max_tokens=8 * 6 * 10 + 4 * 6 * 10))
        second.run(progress=False)
        return second

    a = two_phases(tmp_path / "a")
    assert a.step == 20 and a.tokens_seen == 8 * 6 * 10 + 4 * 6 * 10
    events = [h for h in a.history if "event" in h]
    assert len(events) == 1 and events[0]["step"] == 10 and "batch_size 8 -> 4" in events[0]["event"]
    b = two_phases(tmp_path / "b")
    for (name, x), y in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(x, y), name
    # the phase-2 streams start exactly where phase 1's shuffled order stood
    restarted = StreamBatcher(a.corpus, 4, 6, seed=0)
    restarted.restart_at(0, 5)
    first_row = restarted.next_batch()[0][0, 0]
    assert list(first_row[: len(a.corpus.sentence(int(restarted._order[5])))]) == \
        list(a.corpus.sentence(int(restarted._order[5])))[:6]
