"""The biLM pretraining step as it was before the fast path (kept here, outside the package, as the benchmark's
baseline and the tests' reference): batch-major windows through ``ProjectedLstmLayer.forward`` under plain
autograd, and the character CNN over all 50 character positions of every word type.

Same semantics as :class:`elmo_bench.pretrain.language_model.LanguageModel` (what the fast path must equal); only the
order of dropout masks differs, so comparisons run with dropout 0.
"""
from __future__ import annotations

import torch
from torch.nn import functional as F

from elmo_bench.bilm.lstm import LayerState
from elmo_bench.pretrain.language_model import LanguageModel


def reference_encode_words(encoder, chars: torch.Tensor) -> torch.Tensor:
    """(words, max_chars) → (words, projection_dim): one convolution per bank over every position."""
    embedded = encoder.char_embedding(chars).transpose(1, 2)  # (words, char_dim, max_chars)
    pooled = [conv(embedded).max(dim=-1).values for conv in encoder.convolutions]
    x = encoder.activation(torch.cat(pooled, dim=-1))
    for highway in encoder.highways:
        x = highway(x)
    return encoder.projection(x)


def reference_sampled_loss(softmax, h: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The old ``LMSoftmax.sampled_loss`` (two separate gathers); full softmax when not training."""
    if not (softmax.training and softmax.num_sampled):
        return softmax.full_loss(h, targets)
    candidates, num_tries = softmax.sampler.sample(softmax.num_sampled)
    sampled = torch.as_tensor(candidates, device=h.device)
    tries = float(num_tries)

    def log_expected(ids: torch.Tensor) -> torch.Tensor:
        p = softmax.sampler.probability(ids)
        return torch.log(-torch.expm1(tries * torch.log1p(-p))).to(h.dtype)

    true_logit = (h * softmax.weight[targets]).sum(-1) + softmax.bias[targets] - log_expected(targets)
    sampled_logits = F.linear(h, softmax.weight[sampled], softmax.bias[sampled]) - log_expected(sampled)
    hits = targets.unsqueeze(1) == sampled.unsqueeze(0)
    sampled_logits = sampled_logits.masked_fill(hits, torch.finfo(h.dtype).min)
    logits = torch.cat([true_logit.unsqueeze(1), sampled_logits], dim=1)
    return F.cross_entropy(logits, torch.zeros_like(targets))


def reference_forward(model: LanguageModel, chars: torch.Tensor, inverse: torch.Tensor, targets: torch.Tensor,
                      state: list[LayerState]) -> tuple[torch.Tensor, list[LayerState]]:
    """The old ``LanguageModel.forward``: inverse/targets (2, batch, time) → mean loss, final state per layer."""
    directions, batch, time = inverse.shape
    vectors = reference_encode_words(model.bilm.token_encoder, chars)
    x = vectors[inverse]  # (2, batch, time, proj)
    batch_sizes = [batch] * time
    skip = model.bilm.options.use_skip_connections
    final = []
    for k, layer in enumerate(model.bilm.lstm.layers):
        out, layer_state = layer(model.dropout(x), batch_sizes, state[k])
        if k > 0 and skip:
            out = out + x
        x = out
        final.append(layer_state)
    h = model.dropout(x).reshape(-1, x.shape[-1])
    return reference_sampled_loss(model.softmax, h, targets.reshape(-1)), final


def reference_step(trainer, inputs, targets) -> float:
    """The old ``Trainer.train_step`` body on given (2, batch, time) windows (single process)."""
    inputs_t = torch.from_numpy(inputs)
    types, inverse = torch.unique(inputs_t, return_inverse=True)
    chars = trainer.table_chars[types].long()
    target_ids = trainer.table_vocab[torch.from_numpy(targets)]
    state = [(h.detach(), c.detach()) for h, c in trainer.state]
    trainer.model.train()
    loss, final = reference_forward(trainer.model, chars, inverse, target_ids, state)
    trainer.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    clip = trainer.cfg.grad_clip
    if clip:
        torch.nn.utils.clip_grad_norm_(trainer.model.parameters(), clip)
    trainer.optimizer.step()
    trainer.state = [(h.detach(), c.detach()) for h, c in final]
    return float(loss.detach())
