"""The two readouts a lens reads a layer through: the biLM's shared softmax and a causal LM's final norm and
``lm_head``. Each gives, for a batch of sentences, every requested layer's hidden vectors at the positions it scores
(a *stream*: a layer index in the model and a direction) with the gold token and the sentence of each position, and
turns a stream's vectors into logits.

- biLM: ``<S> w1 .. wn </S>`` from a zero state (elmo_bench.pretrain.perplexity scores the same way); the forward
  half of layer k at positions 0 .. n predicts ``w1 .. wn </S>``, the backward half at 1 .. n + 1 predicts
  ``<S> w1 .. wn``; layer 0 is the token layer, the same vector both ways. Out-of-vocabulary words are ``<UNK>``.
- causal LM: the sentence's words through the encoder's tokenizer (pre-split, with the model's special tokens, cut
  to the encoder's window); the hidden state at token t predicts token t + 1. A layer below the last goes through
  the model's final norm, then ``lm_head``; the last hidden state is already normed (Hugging Face applies the final
  norm to it), so ``lm_head`` on it is the model's own logits.

A random twin keeps the trained model's head (its own head is random noise: reading through it measures nothing).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch
from torch.nn import functional as F

from elmo_bench.base.errors import ConfigError
from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.lm_head import LmHead, load_lm_head
from elmo_bench.encoders.kinds import kind_of

WHAT = "probe lens"
#: where Hugging Face decoders keep the final norm (Llama, Qwen, Mistral, Gemma; GPT-2; GPT-NeoX, OPT)
NORM_NAMES = ("norm", "ln_f", "final_layer_norm", "final_norm", "decoder.final_layer_norm")
#: the head classes a lens can read (Llama's LlamaForCausalLM, GPT-2's GPT2LMHeadModel, ...)
HEAD_SUFFIXES = ("ForCausalLM", "LMHeadModel")


@dataclass
class Streams:
    """One batch: per (layer, direction) the vectors scored (positions, width), per direction the gold token ids
    and the batch row of each position (positions,)."""

    hidden: dict[tuple[int, str], torch.Tensor]
    gold: dict[str, torch.Tensor]
    row: dict[str, torch.Tensor]


class BiLMReadout:
    """The biLM's shared softmax on each half of each layer."""

    directions = ("forward", "backward")
    kind = "bidirectional"

    def __init__(self, encoder: Any, head: LmHead, device: Any) -> None:
        self.bilm, self.head, self.device = encoder.bilm, head, device
        self.weight, self.bias = head.weight.to(device), head.bias.to(device)
        self.top = int(self.bilm.num_layers) - 1
        self.vocab = int(self.weight.shape[0])

    @torch.no_grad()
    def streams(self, batch: Sequence[Sequence[str]], layers: Sequence[int]) -> Streams:
        """The streams of ``layers`` for ``batch`` (see the module docstring)."""
        out = self.bilm(batch_to_ids([list(s) for s in batch]).to(self.device), keep_boundaries=True)
        lengths = out.mask.sum(1)
        time = out.mask.shape[1]
        targets = self.head.targets(batch, time).to(self.device)
        valid = torch.arange(time - 1, device=self.device) < (lengths - 1).unsqueeze(1)      # (batch, time − 1)
        rows = torch.arange(len(batch), device=self.device).unsqueeze(1).expand_as(valid)[valid]
        half = out.layers.shape[-1] // 2
        hidden = {}
        for k in layers:
            hidden[(k, "forward")] = out.layers[:, k, :-1, :half][valid].float()
            hidden[(k, "backward")] = out.layers[:, k, 1:, half:][valid].float()
        gold = {"forward": targets[:, 1:][valid], "backward": targets[:, :-1][valid]}
        return Streams(hidden, gold, {"forward": rows, "backward": rows})

    def logits(self, hidden: torch.Tensor, layer: int) -> torch.Tensor:
        """The shared softmax's logits (the same head on every layer and both directions)."""
        return F.linear(hidden, self.weight, self.bias)


def final_norm(model: Any) -> Any:
    """The decoder's final norm module; one line when it has none this readout knows."""
    for name in NORM_NAMES:
        try:
            return model.get_submodule(name)
        except AttributeError:
            continue
    raise ConfigError(f"{WHAT}: found no final norm in {type(model).__name__} (looked for {', '.join(NORM_NAMES)})")


def causal_head(encoder: Any) -> torch.nn.Module:
    """The trained ``lm_head`` of a transformers encoder's model directory (float32, frozen, on the CPU); one line
    for a model that has none (an encoder-only model, a checkpoint saved without its head)."""
    from transformers import AutoModelForCausalLM  # lazy: transformers

    architectures = list(getattr(encoder.model.config, "architectures", None) or [])
    if not any(name.endswith(HEAD_SUFFIXES) for name in architectures):
        raise ConfigError(f"{WHAT}: needs a causal LM with its head (a *ForCausalLM model); "
                          f"{encoder.path} is {', '.join(architectures) or 'a model without a recorded head'}")
    causal = AutoModelForCausalLM.from_pretrained(encoder.path, revision=encoder.revision)
    head = causal.get_output_embeddings()
    if head is None:
        raise ConfigError(f"{WHAT}: {encoder.path} ({architectures[0]}) has no output embeddings (lm_head)")
    head = head.float().eval()
    head.requires_grad_(False)
    return head


class CausalReadout:
    """A Hugging Face decoder's final norm and ``lm_head`` on each layer (forward only)."""

    directions = ("forward",)
    kind = "causal"

    def __init__(self, encoder: Any, head: torch.nn.Module, device: Any) -> None:
        self.model, self.tokenizer, self.device = encoder.model, encoder.tokenizer, device
        self.head = head.to(device)
        self.norm = final_norm(self.model)
        self.top = int(self.model.config.num_hidden_layers)
        self.window = getattr(encoder, "window", None)
        self.pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.vocab = int(self.head.weight.shape[0])

    def ids(self, batch: Sequence[Sequence[str]]) -> list[list[int]]:
        """Each sentence's token ids (its words pre-split, the model's special tokens), cut to the window."""
        encoded = self.tokenizer([list(s) for s in batch], is_split_into_words=True)["input_ids"]
        return [list(ids)[: self.window] if self.window else list(ids) for ids in encoded]

    @torch.no_grad()
    def streams(self, batch: Sequence[Sequence[str]], layers: Sequence[int]) -> Streams:
        """The forward streams of ``layers`` for ``batch``: the state at token t scored against token t + 1."""
        ids = self.ids(batch)
        lengths = torch.tensor([len(i) for i in ids], device=self.device)
        longest = int(lengths.max())
        padded = torch.full((len(ids), longest), self.pad, dtype=torch.long)
        for row, tokens in enumerate(ids):
            padded[row, : len(tokens)] = torch.tensor(tokens)
        padded = padded.to(self.device)
        mask = (torch.arange(longest, device=self.device) < lengths.unsqueeze(1)).long()
        states = self.model(input_ids=padded, attention_mask=mask, output_hidden_states=True,
                            use_cache=False).hidden_states
        valid = torch.arange(longest - 1, device=self.device) < (lengths - 1).unsqueeze(1)
        rows = torch.arange(len(ids), device=self.device).unsqueeze(1).expand_as(valid)[valid]
        hidden = {(k, "forward"): states[k][:, :-1][valid].float() for k in layers}
        return Streams(hidden, {"forward": padded[:, 1:][valid]}, {"forward": rows})

    def logits(self, hidden: torch.Tensor, layer: int) -> torch.Tensor:
        """``lm_head`` on the last layer as it is (already normed), after the final norm below it."""
        if layer == self.top:
            return self.head(hidden)
        return self.head(self.norm(hidden.to(self.model.dtype)).float())


def readout_for(encoder: Any, device: Any, trained: Any = None) -> Any:
    """The readout of ``encoder`` (``trained``: the head to keep, for a random twin); one line for an encoder
    without an LM head."""
    kind = kind_of(encoder.identity())
    if kind.lm_head:                      # the biLM: its shared softmax, in its weights file
        head = trained if trained is not None else load_lm_head(encoder.info["weights"], WHAT)
        return BiLMReadout(encoder, head, device)
    if kind.causal_head:                  # a Hugging Face model: its own final norm and lm_head, when it has them
        return CausalReadout(encoder, trained if trained is not None else causal_head(encoder), device)
    raise ConfigError(f"{WHAT}: needs an encoder with an LM head (a biLM with its softmax, or a *ForCausalLM "
                      f"model); encoder {kind.name} has none")


def trained_head(readout: Any) -> Any:
    """What :func:`readout_for` keeps for the random twin: the biLM's LmHead or the causal LM's ``lm_head``."""
    return readout.head
