"""Viterbi decoding restricted to valid BIO sequences (He et al. 2017 decode with the same constraints).

Valid: ``I-X`` only directly after ``B-X`` or ``I-X``; never at the start. Everything else is allowed.
"""
from __future__ import annotations

from typing import Sequence

import torch


def allowed_transitions(labels: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """(start_ok (n,), trans_ok (n, n)) booleans: trans_ok[a, b] says label b may follow label a."""
    n = len(labels)
    start_ok = torch.ones(n, dtype=torch.bool)
    trans_ok = torch.ones(n, n, dtype=torch.bool)
    for b, lab in enumerate(labels):
        if lab.startswith("I-"):
            start_ok[b] = False
            typ = lab[2:]
            for a, prev in enumerate(labels):
                trans_ok[a, b] = prev in (f"B-{typ}", f"I-{typ}")
    return start_ok, trans_ok


def viterbi(scores: torch.Tensor, start_ok: torch.Tensor, trans_ok: torch.Tensor) -> list[int]:
    """Best label path under the constraints for one sequence; ``scores`` (time, n_labels) are summed per step.

    Assumes at least one valid path exists (true whenever some label is not ``I-``)."""
    neg = torch.finfo(scores.dtype).min / 4
    t_len = scores.shape[0]
    if t_len == 0:
        return []
    trans = torch.where(trans_ok, 0.0, neg).to(scores.dtype)
    best = scores[0] + torch.where(start_ok, 0.0, neg).to(scores.dtype)
    back = []
    for t in range(1, t_len):
        cand = best.unsqueeze(1) + trans  # (prev, cur)
        best, arg = cand.max(dim=0)
        best = best + scores[t]
        back.append(arg)
    path = [int(best.argmax())]
    for arg in reversed(back):
        path.append(int(arg[path[-1]]))
    return path[::-1]


def decode_batch(logits: torch.Tensor, lengths: Sequence[int], labels: Sequence[str]) -> list[list[str]]:
    """logits (batch, time, n_labels) → valid BIO label sequences, one per row, cut to its length."""
    start_ok, trans_ok = allowed_transitions(labels)
    logp = torch.log_softmax(logits.detach().float().cpu(), dim=-1)
    return [[labels[i] for i in viterbi(logp[b, :n], start_ok, trans_ok)] for b, n in enumerate(lengths)]


def is_valid_bio(tags: Sequence[str]) -> bool:
    """True iff no ``I-X`` starts the sequence or follows anything but ``B-X``/``I-X``."""
    prev = "O"
    for tag in tags:
        if tag.startswith("I-") and prev not in (f"B-{tag[2:]}", tag):
            return False
        prev = tag
    return True
