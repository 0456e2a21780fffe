"""BiDAF + self-attention after Clark & Gardner (2017), the ELMo paper's SQuAD baseline.

embedded ⊕ char CNN → shared BiGRU (⊕ ELMo output, where the ELMo paper adds it: at the output of this
contextual layer) → bi-attention (trilinear similarity; context-to-query and query-to-context) → linear+ReLU →
residual self-attention (BiGRU, context-to-context attention with the diagonal masked, linear+ReLU, added to its
input) → BiGRU → start logits; [that BiGRU's states ; its input] → BiGRU → end logits.
All steps are masked so that padding never changes a question's scores.
"""
from __future__ import annotations

import torch
from torch import nn

from elmo_bench.data.batch import Batch
from elmo_bench.modules.char_cnn import CharCnn
from elmo_bench.modules.labels import IGNORE
from elmo_bench.modules.masked_rnn import MaskedBiRnn
from elmo_bench.modules.masked_softmax import masked_softmax

QUESTION, CONTEXT = "question", "context"


class TriLinear(nn.Module):
    """s_ij = w_x·x_i + w_y·y_j + w_xy·(x_i ⊙ y_j) + b: (batch, Tx, d), (batch, Ty, d) → (batch, Tx, Ty)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.w_x = nn.Linear(dim, 1)
        self.w_y = nn.Linear(dim, 1, bias=False)
        self.w_xy = nn.Parameter(torch.empty(dim).uniform_(-dim ** -0.5, dim ** -0.5))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.w_x(x) + self.w_y(y).transpose(1, 2) + torch.bmm(x * self.w_xy, y.transpose(1, 2))


class BidafSelfAttention(nn.Module):
    """The span head. forward(batch) →
    {"span_start_logits", "span_end_logits": (batch, context_time), "loss" when targets hold span_start/end}."""

    def __init__(self, input_dim: int, elmo_output_dim: int = 0, *, hidden_dim: int, linear_dim: int,
                 dropout: float, use_chars: bool, char_dim: int, char_filters: int, char_width: int) -> None:
        super().__init__()
        self.elmo_output_dim = elmo_output_dim
        self.char_cnn = CharCnn(char_dim, char_filters, char_width, padding="same") if use_chars else None
        token_dim = input_dim + (char_filters if use_chars else 0)
        self.dropout = nn.Dropout(dropout)
        self.contextual = MaskedBiRnn(token_dim, hidden_dim, "gru")
        ctx_dim = 2 * hidden_dim + elmo_output_dim
        self.bi_similarity = TriLinear(ctx_dim)
        self.bi_linear = nn.Linear(4 * ctx_dim, linear_dim)
        self.self_gru = MaskedBiRnn(linear_dim, hidden_dim, "gru")
        self.self_similarity = TriLinear(2 * hidden_dim)
        self.self_linear = nn.Linear(6 * hidden_dim, linear_dim)
        self.start_gru = MaskedBiRnn(linear_dim, hidden_dim, "gru")
        self.start_out = nn.Linear(2 * hidden_dim, 1)
        self.end_gru = MaskedBiRnn(2 * hidden_dim + linear_dim, hidden_dim, "gru")
        self.end_out = nn.Linear(2 * hidden_dim, 1)

    def _contextualise(self, batch: Batch, field: str) -> torch.Tensor:
        """→ (batch, time, 2*hidden [+ elmo_output_dim]): [GRU(dropout(GloVe ; chars) ; ELMo_in) ; ELMo_out]."""
        mask = batch.mask(field)
        extra = [self.char_cnn(batch.chars(field, "SQuAD head"))] if self.char_cnn is not None else []
        h = self.contextual(batch.inputs(field, self.dropout, extra), mask)
        elmo = batch.elmo_output(field, self.elmo_output_dim, "SQuAD head")
        if elmo is not None:  # already dropped once by the ELMo module
            h = torch.cat([h, elmo * mask.unsqueeze(-1).to(h.dtype)], dim=-1)
        return h

    def forward(self, batch: Batch) -> dict[str, torch.Tensor]:
        c_mask, q_mask = batch.mask(CONTEXT), batch.mask(QUESTION)
        c = self._contextualise(batch, CONTEXT)                                 # (batch, Tc, D)
        q = self._contextualise(batch, QUESTION)                                # (batch, Tq, D)

        # bi-attention
        sim = self.bi_similarity(c, q)                                          # (batch, Tc, Tq)
        pair = c_mask.unsqueeze(2) & q_mask.unsqueeze(1)
        c2q = torch.bmm(masked_softmax(sim, pair, dim=2), q)                    # (batch, Tc, D)
        best = sim.masked_fill(~pair, torch.finfo(sim.dtype).min).max(dim=2).values  # (batch, Tc)
        q2c_w = masked_softmax(best, c_mask, dim=1)                             # (batch, Tc)
        q2c = torch.bmm(q2c_w.unsqueeze(1), c)                                  # (batch, 1, D)
        # dropout on [c; c2q; c*c2q; q2c*c2q] (batch, Tc, 4D), except c's ELMo_out columns: they were dropped once
        own = c.shape[-1] - self.elmo_output_dim
        att = torch.cat([self.dropout(c[..., :own]), c[..., own:],
                         self.dropout(torch.cat([c2q, c * c2q, q2c * c2q], dim=-1))], dim=-1)
        x = torch.relu(self.bi_linear(att))                                     # (batch, Tc, linear)

        # residual self-attention, a token never attends to itself
        s = self.self_gru(self.dropout(x), c_mask)                              # (batch, Tc, 2h)
        self_sim = self.self_similarity(s, s)                                   # (batch, Tc, Tc)
        eye = torch.eye(s.size(1), dtype=torch.bool, device=s.device).unsqueeze(0)
        self_mask = c_mask.unsqueeze(2) & c_mask.unsqueeze(1) & ~eye
        s_att = torch.bmm(masked_softmax(self_sim, self_mask, dim=2), s)        # (batch, Tc, 2h)
        x = x + torch.relu(self.self_linear(self.dropout(torch.cat([s, s_att, s * s_att], dim=-1))))

        # span prediction
        start_h = self.start_gru(self.dropout(x), c_mask)                       # (batch, Tc, 2h)
        end_h = self.end_gru(self.dropout(torch.cat([start_h, x], dim=-1)), c_mask)
        neg = torch.finfo(x.dtype).min
        start_logits = self.start_out(self.dropout(start_h)).squeeze(-1).masked_fill(~c_mask, neg)
        end_logits = self.end_out(self.dropout(end_h)).squeeze(-1).masked_fill(~c_mask, neg)
        output = {"span_start_logits": start_logits, "span_end_logits": end_logits, "context_mask": c_mask}
        targets = batch.targets
        if "span_start" in targets:
            output["loss"] = span_loss(start_logits, end_logits, targets["span_start"], targets["span_end"])
        return output


def span_loss(start_logits: torch.Tensor, end_logits: torch.Tensor, span_start: torch.Tensor,
              span_end: torch.Tensor) -> torch.Tensor:
    """Mean over questions with a gold span (target != -100) of CE(start) + CE(end); 0 when none has one."""
    ce = nn.functional.cross_entropy
    total = (ce(start_logits, span_start, ignore_index=IGNORE, reduction="sum")
             + ce(end_logits, span_end, ignore_index=IGNORE, reduction="sum"))
    count = (span_start != IGNORE).sum()
    return total / count.clamp(min=1).to(total.dtype)
