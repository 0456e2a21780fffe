"""Viterbi decoding restricted to valid BIO sequences (He et al. 2017 decode with the same constraints).

Valid: ``I-X`` only directly after ``B-X`` or ``I-X``; never at the start. Everything else is allowed.
"""
from __future__ import annotations

from typing import Sequence

import torch

from elmo_bench.modules.bio import bio_constraints, forbid
from elmo_bench.modules.bio import viterbi as shared_viterbi


def allowed_transitions(labels: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """(start_ok (n,), trans_ok (n, n)) booleans: trans_ok[a, b] says label b may follow label a."""
    start_ok, trans_ok, _ = bio_constraints(labels)
    return start_ok, trans_ok


def viterbi(scores: torch.Tensor, start_ok: torch.Tensor, trans_ok: torch.Tensor) -> list[int]:
    """Best label path under the constraints for one sequence; ``scores`` (time, n_labels) are summed per step.

    Assumes at least one valid path exists (true whenever some label is not ``I-``)."""
    if scores.shape[0] == 0:
        return []
    zeros = scores.new_zeros(scores.shape[1])
    mask = torch.ones(1, scores.shape[0], dtype=torch.bool, device=scores.device)
    return shared_viterbi(scores[None], mask, forbid(zeros.expand(len(zeros), -1), trans_ok),
                          forbid(zeros, start_ok), zeros)[0]


def decode_batch(logits: torch.Tensor, lengths: Sequence[int], labels: Sequence[str]) -> list[list[str]]:
    """logits (batch, time, n_labels) → valid BIO label sequences, one per row, cut to its length."""
    start_ok, trans_ok, _ = bio_constraints(labels)
    logp = torch.log_softmax(logits.detach().float().cpu(), dim=-1)
    zeros = logp.new_zeros(logp.shape[-1])
    mask = torch.arange(logp.shape[1])[None] < torch.tensor(list(lengths))[:, None]
    paths = shared_viterbi(logp, mask, forbid(zeros.expand(len(zeros), -1), trans_ok), forbid(zeros, start_ok), zeros)
    return [[labels[i] for i in path] for path in paths]


def is_valid_bio(tags: Sequence[str]) -> bool:
    """True iff no ``I-X`` starts the sequence or follows anything but ``B-X``/``I-X``."""
    prev = "O"
    for tag in tags:
        if tag.startswith("I-") and prev not in (f"B-{tag[2:]}", tag):
            return False
        prev = tag
    return True
