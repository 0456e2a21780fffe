"""The batched solver's steps do not depend on ``threads`` (issue 58): its vector algebra runs on one thread
(batched.one_thread), so a fit on two threads takes the steps of a fit on one, bit for bit, where MKL's threaded dot
product of a problem's ~17k parameters would round otherwise (and cost far more than the dot)."""
from __future__ import annotations

import numpy as np
import torch

from elmo_bench.probe.lib.batched import Problems, fit_softmax_batched, one_thread


def test_two_threads_take_the_steps_of_one():
    rng = np.random.default_rng(0)
    n, dim, classes = 1500, 384, 45                       # MiniLM's width and EWT's tags: 17,325 parameters a row
    y = rng.integers(0, classes, n)
    centres = rng.normal(size=(classes, dim))
    x = torch.tensor(np.stack([centres[y] * s + rng.normal(size=(n, dim)) for s in (1.0, 0.3)]), dtype=torch.float32)
    before = torch.get_num_threads()
    found = {}
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            fits = fit_softmax_batched(Problems(x, torch.tensor(y), classes), [1e-3, 1e-3], 15, 1e-6)
            found[threads] = [(p.iterations, p.loss, p.weight.numpy().tobytes(), p.bias.numpy().tobytes())
                              for p in fits]
            assert torch.get_num_threads() == threads      # given back after each round of steps
    finally:
        torch.set_num_threads(before)
    assert found[1] == found[2]


def test_one_thread_gives_the_threads_back():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with one_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
