"""BIO tag constraints and the Viterbi decoder shared by the NER CRF and the SRL decoder.

Valid BIO: ``I-X`` only directly after ``B-X`` or ``I-X``, never first; everything else may follow anything.
"""
from __future__ import annotations

from typing import Sequence

import torch


def bio_constraints(labels: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Allowed (start (T,), transitions (T, T) indexed [from, to], end (T,)) booleans for BIO labels."""
    n = len(labels)
    allowed = torch.ones(n, n, dtype=torch.bool)
    start = torch.ones(n, dtype=torch.bool)
    for j, to in enumerate(labels):
        if to.startswith("I-"):
            start[j] = False
            for i, frm in enumerate(labels):
                allowed[i, j] = frm in ("B-" + to[2:], to)
    return start, allowed, torch.ones(n, dtype=torch.bool)


def forbid(scores: torch.Tensor, ok: torch.Tensor) -> torch.Tensor:
    """``scores`` with a very negative (finite) value wherever ``ok`` is False."""
    return scores.masked_fill(~ok, torch.finfo(scores.dtype).min / 4)


def viterbi(emissions: torch.Tensor, mask: torch.Tensor, transitions: torch.Tensor, start: torch.Tensor,
            end: torch.Tensor) -> list[list[int]]:
    """Best path per sequence of ``start[y0] + sum_t e[t, y_t] + sum A[y_{t-1}, y_t] + end[y_last]``.

    emissions (batch, time, T), mask (batch, time) left-aligned prefixes, transitions (T, T) [from, to], start and
    end (T,) → one list of mask.sum() tag ids per sequence (empty for an empty row).
    """
    batch, time, _ = emissions.shape
    score = start.unsqueeze(0) + emissions[:, 0]  # (batch, T)
    backpointers = []
    for t in range(1, time):
        best, idx = (score.unsqueeze(2) + transitions.unsqueeze(0)).max(dim=1)  # (batch, T) over "from"
        score = torch.where(mask[:, t].unsqueeze(1), best + emissions[:, t], score)
        backpointers.append(idx)
    score = score + end.unsqueeze(0)
    lengths = mask.long().sum(1).tolist()
    paths: list[list[int]] = []
    for b in range(batch):
        if lengths[b] == 0:
            paths.append([])
            continue
        tag = int(score[b].argmax())
        path = [tag]
        for t in range(lengths[b] - 1, 0, -1):
            tag = int(backpointers[t - 1][b, tag])
            path.append(tag)
        paths.append(path[::-1])
    return paths
