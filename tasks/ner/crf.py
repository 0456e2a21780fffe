"""Linear-chain CRF: masked log-likelihood (forward algorithm in log space) and Viterbi decoding.

Score of a tag path y over a sequence of length n (emissions e, transitions A[from, to]):
    start[y_0] + sum_t e[t, y_t] + sum_{t>=1} A[y_{t-1}, y_t] + end[y_{n-1}]
Masks are left-aligned prefixes (True for real tokens); every sequence must hold at least one token.
Optional transition constraints (e.g. BIO validity) apply to decoding only, as in the paper's NER model
("ensuring that the output tag sequence is valid").
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from elmo_bench.modules.bio import forbid, viterbi


class CRF(nn.Module):
    """Transitions (T, T) indexed [from, to], plus start and end scores (T,)."""

    def __init__(self, num_tags: int, constraints: Optional[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = None):
        super().__init__()
        self.num_tags = num_tags
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags))
        self.start = nn.Parameter(torch.zeros(num_tags))
        self.end = nn.Parameter(torch.zeros(num_tags))
        nn.init.uniform_(self.transitions, -0.1, 0.1)
        if constraints is None:
            constraints = (torch.ones(num_tags, dtype=torch.bool), torch.ones(num_tags, num_tags, dtype=torch.bool),
                           torch.ones(num_tags, dtype=torch.bool))
        start_ok, trans_ok, end_ok = constraints
        self.register_buffer("start_ok", start_ok.clone(), persistent=False)
        self.register_buffer("trans_ok", trans_ok.clone(), persistent=False)
        self.register_buffer("end_ok", end_ok.clone(), persistent=False)

    def path_score(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Unnormalised score of the gold paths. emissions (batch, time, T), tags/mask (batch, time) → (batch,)."""
        mask_f = mask.to(emissions.dtype)
        emit = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)  # (batch, time)
        score = self.start[tags[:, 0]] + (emit * mask_f).sum(1)
        trans = self.transitions[tags[:, :-1], tags[:, 1:]]  # (batch, time-1)
        score = score + (trans * mask_f[:, 1:]).sum(1)
        last = mask.long().sum(1) - 1  # (batch,)
        last_tags = tags.gather(1, last.unsqueeze(1)).squeeze(1)
        return score + self.end[last_tags]

    def log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """log Z by the forward algorithm. emissions (batch, time, T), mask (batch, time) → (batch,)."""
        alpha = self.start.unsqueeze(0) + emissions[:, 0]  # (batch, T)
        for t in range(1, emissions.size(1)):
            nxt = torch.logsumexp(alpha.unsqueeze(2) + self.transitions.unsqueeze(0), dim=1) + emissions[:, t]
            alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
        return torch.logsumexp(alpha + self.end.unsqueeze(0), dim=1)

    def log_likelihood(self, emissions: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """log p(tags | emissions) per sequence: (batch,). Padded positions of ``tags`` may hold any valid id."""
        if not bool(mask[:, 0].all()):
            raise ValueError("CRF: every sequence needs at least one token (mask[:, 0] must be True)")
        return self.path_score(emissions, tags, mask) - self.log_partition(emissions, mask)

    @torch.no_grad()
    def viterbi(self, emissions: torch.Tensor, mask: torch.Tensor, constrained: bool = True) -> list[list[int]]:
        """Best tag path per sequence (lists of length mask.sum). emissions (batch, time, T), mask (batch, time)."""
        start, trans, end = self.start, self.transitions, self.end
        if constrained:
            start, trans, end = forbid(start, self.start_ok), forbid(trans, self.trans_ok), forbid(end, self.end_ok)
        return viterbi(emissions, mask, trans, start, end)
