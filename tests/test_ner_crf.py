"""CRF against brute-force enumeration of every tag path on tiny random inputs."""
from __future__ import annotations

import itertools

import pytest
import torch

from elmo_bench.modules.bio import bio_constraints
from elmo_bench.tasks.ner.crf import CRF


@torch.no_grad()
def brute_scores(crf: CRF, emissions: torch.Tensor, n: int, allowed=None) -> dict[tuple[int, ...], float]:
    """Score of every path of length n for one sequence: emissions (time, T)."""
    out = {}
    for path in itertools.product(range(crf.num_tags), repeat=n):
        if allowed is not None and not allowed(path):
            continue
        s = crf.start[path[0]] + crf.end[path[-1]] + sum(emissions[t, y] for t, y in enumerate(path))
        s = s + sum(crf.transitions[a, b] for a, b in zip(path, path[1:]))
        out[path] = float(s)
    return out


@pytest.fixture
def crf() -> CRF:
    torch.manual_seed(0)
    model = CRF(3)
    with torch.no_grad():  # non-trivial start/end so they are exercised too
        model.start.normal_()
        model.end.normal_()
        model.transitions.normal_()
    return model


def test_log_likelihood_matches_brute_force_with_masking(crf: CRF) -> None:
    torch.manual_seed(1)
    lengths = [1, 2, 3, 4]
    time = max(lengths)
    emissions = torch.randn(len(lengths), time, 3, dtype=torch.float64)
    crf = crf.double()
    mask = torch.tensor([[t < n for t in range(time)] for n in lengths])
    tags = torch.randint(0, 3, (len(lengths), time))
    ll = crf.log_likelihood(emissions, tags, mask).detach()
    for b, n in enumerate(lengths):
        scores = brute_scores(crf, emissions[b], n)
        log_z = torch.logsumexp(torch.tensor(list(scores.values()), dtype=torch.float64), 0)
        gold = scores[tuple(tags[b, :n].tolist())]
        assert float(ll[b]) == pytest.approx(gold - float(log_z), abs=1e-9)
        # probabilities of all paths sum to one
        assert float(torch.logsumexp(torch.tensor(list(scores.values()), dtype=torch.float64) - log_z, 0)) == pytest.approx(0.0, abs=1e-9)


def test_padding_values_do_not_matter(crf: CRF) -> None:
    torch.manual_seed(2)
    emissions = torch.randn(1, 5, 3)
    mask = torch.tensor([[True, True, False, False, False]])
    tags = torch.tensor([[1, 2, 0, 0, 0]])
    other = emissions.clone()
    other[:, 2:] = 100.0 * torch.randn(1, 3, 3)
    other_tags = tags.clone()
    other_tags[:, 2:] = 2
    a = crf.log_likelihood(emissions, tags, mask)
    b = crf.log_likelihood(other, other_tags, mask)
    assert torch.allclose(a, b)
    assert crf.viterbi(emissions, mask) == crf.viterbi(other, mask)


def test_viterbi_matches_brute_force(crf: CRF) -> None:
    torch.manual_seed(3)
    lengths = [4, 1, 3, 2, 4]
    time = max(lengths)
    emissions = torch.randn(len(lengths), time, 3, dtype=torch.float64)
    crf = crf.double()
    mask = torch.tensor([[t < n for t in range(time)] for n in lengths])
    paths = crf.viterbi(emissions, mask)
    for b, n in enumerate(lengths):
        scores = brute_scores(crf, emissions[b], n)
        best = max(scores, key=scores.get)
        assert tuple(paths[b]) == best
        assert len(paths[b]) == n


def test_constrained_viterbi_matches_brute_force_over_valid_bio_paths() -> None:
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    torch.manual_seed(4)
    crf = CRF(len(labels), bio_constraints(labels)).double()
    with torch.no_grad():
        crf.transitions.normal_()
        crf.start.normal_()
    emissions = torch.randn(3, 4, len(labels), dtype=torch.float64)
    emissions[:, :, 2] += 3.0  # push towards I-PER so that unconstrained decoding would be invalid
    mask = torch.tensor([[True] * 4, [True] * 3 + [False], [True] + [False] * 3])

    def valid(path: tuple[int, ...]) -> bool:
        prev = "O"
        for y in path:
            tag = labels[y]
            if tag.startswith("I-") and prev[2:] != tag[2:]:
                return False
            prev = tag
        return True

    paths = crf.viterbi(emissions, mask, constrained=True)
    for b in range(3):
        n = int(mask[b].sum())
        scores = brute_scores(crf, emissions[b], n, allowed=valid)
        assert tuple(paths[b]) == max(scores, key=scores.get)
    assert labels[crf.viterbi(emissions[2:], mask[2:], constrained=True)[0][0]] != "I-PER"


def test_empty_sequence_is_refused(crf: CRF) -> None:
    with pytest.raises(ValueError, match="at least one token"):
        crf.log_likelihood(torch.randn(1, 2, 3), torch.zeros(1, 2, dtype=torch.long), torch.tensor([[False, False]]))
