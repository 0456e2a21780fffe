"""The fast pretraining step (window LSTM with a hand-written backward, length-bucketed char CNN) equals the
reference step kept in bench/pretrain_reference.py: loss, every gradient, the carried state, and whole training
steps, on a tiny model with the clips active."""
from __future__ import annotations

import copy
import random
import sys
from pathlib import Path

import pytest
import torch

from elmo_bench.bilm.chars import MAX_CHARS, word_to_ids
from elmo_bench.bilm.window_lstm import set_direction_threads
from elmo_bench.pretrain.train import Trainer

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from pretrain_helpers import TINY_MODEL, grammar_sentences, tiny_config, write_lines  # noqa: E402
from pretrain_reference import reference_encode_words, reference_forward, reference_step  # noqa: E402


def _corpus_file(tmp_path: Path) -> Path:
    rng = random.Random(3)
    lines = grammar_sentences(60, seed=1)
    # words of every spelling length up to past the 50-character limit, so buckets and truncation are exercised
    lines += [" ".join("x" * rng.randint(1, 60) for _ in range(8)) for _ in range(10)]
    tmp_path.mkdir(parents=True, exist_ok=True)
    return write_lines(tmp_path / "train.txt", lines)


def _trainer(tmp_path: Path, **over) -> Trainer:
    # small clips: both clips bind on many units
    cfg = tiny_config(_corpus_file(tmp_path), tmp_path / "out", model=dict(TINY_MODEL, cell_clip=0.4, proj_clip=0.3),
                      **over)
    return Trainer(cfg, device="cpu")


def _window(trainer: Trainer):
    inputs, targets = trainer.batcher.next_batch()
    types, inverse = torch.unique(torch.from_numpy(inputs), return_inverse=True)
    return trainer.table_chars[types].long(), inverse, trainer.table_vocab[torch.from_numpy(targets)]


def _loss_and_grads(model, forward, chars, inverse, targets, state, sampler_state):
    model.softmax.sampler.set_state(copy.deepcopy(sampler_state))
    model.zero_grad(set_to_none=True)
    state = [(h.clone().requires_grad_(), c.clone().requires_grad_()) for h, c in state]
    loss, final = forward(chars, inverse, targets, state)
    # the carried state's gradient path is checked too (training detaches it, the function must not care)
    total = loss + sum((h * h).sum() * 0.1 + (c * c).sum() * 0.05 for h, c in final)
    total.backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters()}
    grads.update({f"state{k}": torch.cat([h.grad.flatten(), c.grad.flatten()]) for k, (h, c) in enumerate(state)})
    return loss.detach(), grads, [(h.detach(), c.detach()) for h, c in final]


@pytest.mark.parametrize("dtype,tol,direction_threads", [(torch.float64, 1e-12, 1), (torch.float32, 2e-5, 1),
                                                         (torch.float64, 1e-12, 2)])
def test_fast_forward_and_backward_equal_the_reference(tmp_path, dtype, tol, direction_threads):
    torch.manual_seed(0)
    trainer = _trainer(tmp_path, direction_threads=direction_threads)
    model = trainer.model.to(dtype)
    model.train()
    chars, inverse, targets = _window(trainer)
    state = [(torch.randn_like(h, dtype=dtype), 2 * torch.randn_like(c, dtype=dtype))
             for h, c in model.zero_state(trainer.cfg.batch_size)]
    sampler_state = model.softmax.sampler.state()
    ref = _loss_and_grads(model, lambda *a: reference_forward(model, *a), chars, inverse, targets, state,
                          sampler_state)
    fast = _loss_and_grads(model, model, chars, inverse, targets, state, sampler_state)
    assert abs(float(ref[0] - fast[0])) <= tol * max(1.0, abs(float(ref[0])))
    assert ref[1].keys() == fast[1].keys()
    for name in ref[1]:
        scale = max(1.0, float(ref[1][name].abs().max()))
        assert float((ref[1][name] - fast[1][name]).abs().max()) <= tol * scale, name
    for (h1, c1), (h2, c2) in zip(ref[2], fast[2]):
        assert torch.allclose(h1, h2, atol=tol, rtol=0) and torch.allclose(c1, c2, atol=tol, rtol=0)
    # the clips really bound: some cell and projection values sit at the bound
    assert any(bool((c.abs() >= 0.4 - 1e-9).any()) for _, c in fast[2])
    set_direction_threads(1)


def test_whole_training_steps_equal_the_reference_steps(tmp_path):
    torch.manual_seed(0)
    fast = _trainer(tmp_path / "a")
    reference = _trainer(tmp_path / "b")
    reference.model.load_state_dict(fast.model.state_dict())
    for _ in range(4):
        inputs, targets = fast.batcher.next_batch()
        fast.batcher.next_batch = lambda batch=(inputs, targets): batch
        loss_fast = fast.train_step()
        loss_ref = reference_step(reference, inputs, targets)
        assert loss_fast == pytest.approx(loss_ref, rel=1e-5, abs=1e-6)
    for (name, a), b in zip(fast.model.state_dict().items(), reference.model.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), name


def test_bucketed_char_cnn_equals_every_position_conv(tmp_path):
    torch.manual_seed(0)
    trainer = _trainer(tmp_path)
    encoder = trainer.model.bilm.token_encoder.double()
    rng = random.Random(0)
    words = ["<S>", "</S>", "a", "x" * 48, "y" * 49, "z" * 70] + ["".join(rng.choice("abcdé") for _ in range(
        rng.randint(1, 30))) for _ in range(40)]
    chars = torch.tensor([word_to_ids(w, MAX_CHARS) for w in words], dtype=torch.long)
    fast = encoder.encode_words(chars)
    grad = torch.randn_like(fast)
    fast_grads = torch.autograd.grad(fast, list(encoder.parameters()), grad)
    ref = reference_encode_words(encoder, chars)
    ref_grads = torch.autograd.grad(ref, list(encoder.parameters()), grad)
    assert torch.allclose(fast, ref, atol=1e-12, rtol=0)
    for a, b in zip(fast_grads, ref_grads):
        assert torch.allclose(a, b, atol=1e-12, rtol=0)
