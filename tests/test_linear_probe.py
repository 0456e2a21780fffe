"""The converged linear probe: L-BFGS reaches the optimum that can be computed independently of it."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from elmo_bench.probe.lib.linear import Standardiser, accuracy, fit_select_l2, fit_softmax


def test_one_hot_features_reach_the_empirical_tag_distribution():
    """Closed form: with one-hot word features (a bias is redundant with them) and no L2, the optimum's predicted distribution for each
    word is that word's empirical tag distribution (the softmax can match any distribution with full support)."""
    counts = np.array([[5, 3, 2], [1, 8, 1], [2, 2, 6], [4, 4, 2]], dtype=np.float64)   # (words, tags)
    words, tags = [], []
    for w, row in enumerate(counts):
        for t, c in enumerate(row):
            words += [w] * int(c)
            tags += [t] * int(c)
    x = torch.nn.functional.one_hot(torch.tensor(words), 4).double()
    y = torch.tensor(tags)
    # tol 1e-7, not tighter: near the optimum a step of gradient g lowers the loss (0.92) by about g^2, which
    # float64 stops resolving near g = 1e-8, so whether L-BFGS reaches 1e-9 depends on the CPU's rounding
    # (seen: one machine stalled at 3.3e-9); a 1e-7 gradient still puts the probabilities within 1e-6
    probe = fit_softmax(x, y, 3, l2=0.0, tol=1e-7)
    probs = torch.softmax(probe.logits(torch.eye(4, dtype=torch.float64)), -1)   # (words, tags)
    assert probe.converged
    np.testing.assert_allclose(probs.numpy(), counts / counts.sum(1, keepdims=True), atol=1e-6)


def _numpy_gradient(W, b, x, y, l2):
    """The objective's gradient written out by hand: X^T (P - Y) / n + l2 W and mean(P - Y)."""
    logits = x @ W.T + b
    logits -= logits.max(1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(y)), y] -= 1.0
    return p.T @ x / len(y) + l2 * W, p.mean(0)


def test_l2_regularised_optimum_is_stationary_and_unique():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6))
    y = (x[:, 0] + 0.5 * x[:, 1] + rng.normal(scale=0.5, size=300) > 0).astype(int) + (x[:, 2] > 1)
    xt, yt = torch.tensor(x), torch.tensor(y)
    probe = fit_softmax(xt, yt, 3, l2=0.01, tol=1e-8)
    gw, gb = _numpy_gradient(probe.weight.numpy(), probe.bias.numpy(), x, y, 0.01)
    assert probe.converged and np.abs(gw).max() < 1e-8 and np.abs(gb).max() < 1e-8  # by hand, not autograd
    # strictly convex in W: a warm start from elsewhere lands on the same point
    other = fit_softmax(xt, yt, 3, l2=0.01, tol=1e-8, init=fit_softmax(xt, yt, 3, l2=5.0))
    np.testing.assert_allclose(other.weight.numpy(), probe.weight.numpy(), atol=1e-6)


def test_standardiser_uses_training_statistics_only():
    train = torch.tensor([[1.0, 10.0], [3.0, 10.0]])
    scale = Standardiser.fit(train)
    np.testing.assert_allclose(scale(train).numpy(), [[-1.0, 0.0], [1.0, 0.0]])      # constant column: 0, not NaN
    np.testing.assert_allclose(scale(torch.tensor([[5.0, 12.0]])).numpy(), [[3.0, 2e6]], rtol=1e-6)


def test_l2_chosen_on_dev_and_unseen_tags_count_wrong():
    rng = np.random.default_rng(1)
    centres = rng.normal(scale=3, size=(3, 5))
    def sample(n):
        y = rng.integers(0, 3, n)
        return torch.tensor(centres[y] + rng.normal(size=(n, 5))), torch.tensor(y)
    (xa, ya), (xd, yd) = sample(200), sample(100)
    chosen = fit_select_l2(xa, ya, xd, yd, 3, grid=[1.0, 1e-3])
    assert [p["l2"] for p in chosen.path] == [1.0, 1e-3] and chosen.dev_accuracy > 90
    assert accuracy(chosen.probe, xd[:4], torch.tensor([-1, -1, -1, -1])) == 0.0


def test_grid_extends_down_while_the_weakest_l2_wins():
    rng = np.random.default_rng(2)
    centres = rng.normal(scale=3, size=(3, 5))
    def sample(n):
        y = rng.integers(0, 3, n)
        return torch.tensor(centres[y] + rng.normal(size=(n, 5))), torch.tensor(y)
    (xa, ya), (xd, yd) = sample(300), sample(300)
    chosen = fit_select_l2(xa, ya, xd, yd, 3, grid=[100.0, 30.0], extend=2)
    tried = [p["l2"] for p in chosen.path]
    assert tried[:2] == [100.0, 30.0] and len(tried) >= 3 and tried[2] == pytest.approx(3.0)
    assert chosen.dev_accuracy == max(p["dev"] for p in chosen.path)
    no_extension = fit_select_l2(xa, ya, xd, yd, 3, grid=[100.0, 30.0], extend=0)
    assert [p["l2"] for p in no_extension.path] == [100.0, 30.0]
