"""Sampled softmax with the log-uniform sampler, against brute force and the full softmax."""
from __future__ import annotations

import math

import numpy as np
import torch

from elmo_bench.pretrain.softmax import LMSoftmax, LogUniformSampler


def test_log_uniform_probabilities_sum_to_one_and_match_draws():
    sampler = LogUniformSampler(100, seed=1)
    p = sampler.probability(torch.arange(100))
    assert abs(float(p.sum()) - 1.0) < 1e-12
    assert math.isclose(float(p[0]), math.log(2) / math.log(101))
    # Empirical frequency of the first draw of many samples matches P (inverse-CDF correctness).
    first = [sampler.sample(1)[0][0] for _ in range(4000)]
    freq = np.bincount(first, minlength=100) / 4000
    assert abs(freq[0] - float(p[0])) < 0.03 and abs(freq[:10].sum() - float(p[:10].sum())) < 0.03


def test_sampler_draws_distinct_ids_and_counts_tries_and_resumes():
    sampler = LogUniformSampler(50, seed=3)
    state = sampler.state()
    ids, tries = sampler.sample(20)
    assert len(set(ids.tolist())) == 20 and tries >= 20 and ids.min() >= 0 and ids.max() < 50
    sampler.set_state(state)
    again, tries_again = sampler.sample(20)
    assert again.tolist() == ids.tolist() and tries_again == tries


def _brute_force(h, weight, bias, targets, candidates, tries, vocab):
    def log_q(k):
        p = (math.log(k + 2) - math.log(k + 1)) / math.log(vocab + 1)
        return math.log(1 - (1 - p) ** tries)

    total = 0.0
    for row in range(h.shape[0]):
        y = int(targets[row])
        logits = [float(h[row] @ weight[y] + bias[y]) - log_q(y)]
        for k in candidates:
            if int(k) != y:  # accidental hit removed
                logits.append(float(h[row] @ weight[k] + bias[k]) - log_q(int(k)))
        m = max(logits)
        total += -(logits[0] - m - math.log(sum(math.exp(v - m) for v in logits)))
    return total / h.shape[0]


def test_sampled_loss_equals_brute_force_with_accidental_hits():
    torch.manual_seed(0)
    softmax = LMSoftmax(30, 6, num_sampled=8, seed=0).double()
    with torch.no_grad():
        softmax.bias.normal_()
    h = torch.randn(5, 6, dtype=torch.double)
    targets = torch.tensor([0, 3, 7, 29, 3])
    candidates = np.array([3, 0, 11, 5, 20, 1, 2, 9])  # rows 0, 1, 4 have a hit
    got = softmax.sampled_loss(h, targets, candidates, 13).item()
    want = _brute_force(h, softmax.weight.detach(), softmax.bias.detach(), targets, candidates, 13, 30)
    assert abs(got - want) < 1e-10


def test_sampled_loss_approaches_full_loss_as_the_sample_grows():
    torch.manual_seed(0)
    vocab = 200
    softmax = LMSoftmax(vocab, 16, num_sampled=None, seed=0)
    with torch.no_grad():
        softmax.weight.mul_(3.0)
    h = torch.randn(64, 16)
    targets = torch.randint(0, vocab, (64,))
    full = softmax.full_loss(h, targets).item()
    gaps = []
    for size in (4, 32, 128, vocab - 1):
        losses = [softmax.sampled_loss(h, targets, *softmax.sampler.sample(size)).item() for _ in range(20)]
        gaps.append(abs(sum(losses) / len(losses) - full))
    assert gaps[0] > gaps[1] > gaps[3], gaps
    assert gaps[3] < 0.02 * full, (gaps, full)


def test_full_softmax_used_when_not_training_or_not_sampling():
    torch.manual_seed(0)
    softmax = LMSoftmax(10, 4, num_sampled=5)
    h, targets = torch.randn(3, 4), torch.tensor([1, 2, 3])
    softmax.eval()
    assert torch.allclose(softmax.loss(h, targets), torch.nn.functional.cross_entropy(h @ softmax.weight.T + softmax.bias, targets))
    assert LMSoftmax(10, 4, num_sampled=10).num_sampled is None  # sample as large as the vocab → full softmax
