"""Best answer span under start <= end and a length cap, the official prediction format, and a trivial baseline."""
from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import torch


def best_spans(start_logits: torch.Tensor, end_logits: torch.Tensor, mask: torch.Tensor,
               max_length: int = 17) -> tuple[torch.Tensor, torch.Tensor]:
    """argmax over (i, j) of start[i] + end[j] with i <= j < i + max_length, both inside the mask.

    start_logits, end_logits (batch, time) float; mask (batch, time) bool → (starts, ends), each (batch,) long.
    Works in O(batch * time * max_length) memory rather than time². Rows with an empty mask return (0, 0).
    """
    batch, time = start_logits.shape
    width = min(max_length, time)
    neg = torch.finfo(start_logits.dtype).min
    mask = mask.bool()
    scores = start_logits.new_full((batch, time, width), neg)               # [b, i, k] = span (i, i + k)
    for k in range(width):
        valid = mask[:, : time - k] & mask[:, k:]
        s = start_logits[:, : time - k] + end_logits[:, k:]
        scores[:, : time - k, k] = s.masked_fill(~valid, neg)
    flat = scores.view(batch, -1).argmax(dim=1)
    starts = flat // width
    ends = starts + flat % width
    return starts, ends


def span_text(context_text: str, offsets: Sequence[Sequence[int]], start: int, end: int) -> str:
    """The context substring from token ``start``'s first char to token ``end``'s last char."""
    if not offsets:
        return ""
    return context_text[offsets[start][0]: offsets[end][1]]


def to_official(predictions: Sequence[str], examples: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """question id → answer text: the official prediction file's content."""
    return {ex["id"]: pred for pred, ex in zip(predictions, examples)}


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def first_sentence(text: str) -> str:
    """The text up to and including the first '.', '!' or '?' followed by whitespace or the end."""
    match = _SENTENCE_END.search(text)
    return text[: match.end()] if match else text


def first_sentence_baseline(examples: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """A trivial baseline for the report: answer every question with the first sentence of its paragraph."""
    return {ex["id"]: first_sentence(ex["context_text"]) for ex in examples}
