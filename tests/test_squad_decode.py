"""Span decoding: matches brute force under start <= end and the length cap; prediction text; baseline."""
from __future__ import annotations

import torch

from elmo_bench.tasks.squad.decode import best_spans, first_sentence, first_sentence_baseline, span_text, to_official


def _brute(start: torch.Tensor, end: torch.Tensor, mask: torch.Tensor, cap: int) -> tuple[int, int, float]:
    best = (0, 0, float("-inf"))
    n = int(mask.sum())
    for i in range(n):
        for j in range(i, min(n, i + cap)):
            score = float(start[i] + end[j])
            if score > best[2]:
                best = (i, j, score)
    return best


def test_best_spans_equals_brute_force() -> None:
    g = torch.Generator().manual_seed(0)
    for cap in (1, 3, 17, 40):
        lengths = torch.tensor([1, 5, 23, 30, 12])
        start, end = torch.randn(5, 30, generator=g), torch.randn(5, 30, generator=g)
        mask = torch.arange(30)[None] < lengths[:, None]
        starts, ends = best_spans(start, end, mask, cap)
        for b in range(5):
            i, j, score = _brute(start[b], end[b], mask[b], cap)
            assert (starts[b].item(), ends[b].item()) == (i, j)
            assert 0 <= ends[b] - starts[b] < cap and ends[b] < lengths[b]


def test_order_and_cap_hold_against_tempting_logits() -> None:
    # the best unconstrained pair is end 0 < start 4 (order violated) or a 6-token span (cap 3)
    start = torch.tensor([[0.0, 0.0, 5.0, 0.0, 9.0, 0.0, -50.0]])
    end = torch.tensor([[9.0, 0.0, 0.0, 0.0, 1.0, 0.0, 8.0]])
    mask = torch.tensor([[True] * 6 + [False]])
    s, e = best_spans(start, end, mask, max_length=3)
    assert (s.item(), e.item()) == (4, 4)          # 9 + 1 beats 5 + 1 (2,4); padding end 6 is not allowed


def test_span_text_and_official_format() -> None:
    ctx = "Super Bowl 50 was played in 2016."
    offsets = [(0, 5), (6, 10), (11, 13), (14, 17), (18, 24), (25, 27), (28, 32), (32, 33)]
    assert span_text(ctx, offsets, 0, 2) == "Super Bowl 50"
    assert span_text(ctx, offsets, 6, 7) == "2016."
    assert to_official(["x", "y"], [{"id": "q1"}, {"id": "q2"}]) == {"q1": "x", "q2": "y"}


def test_first_sentence_baseline() -> None:
    assert first_sentence("It rained. Then Dr.Who came! Yes") == "It rained."
    assert first_sentence("No end mark here") == "No end mark here"
    assert first_sentence("Pi is 3.14 or so? Sure.") == "Pi is 3.14 or so?"
    assert first_sentence_baseline([{"id": "a", "context_text": "A b. C d."}]) == {"a": "A b."}
