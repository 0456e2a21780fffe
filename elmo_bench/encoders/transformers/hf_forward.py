"""The forward pass of a Hugging Face model that keeps only the layers asked for, and the causality test.

Only the layers asked for: a model's hidden state k (k < L) is the input of its block k, so forward pre-hooks on the
blocks take exactly the requested inputs and the pass is stopped (an exception raised in the hook) once the deepest
requested one is taken: later blocks never run. The last index L is the model's own output (``last_hidden_state``,
after its final norm, as ``output_hidden_states`` gives it: a hook on the last block would miss the norm), so asking
for it runs the whole model. Whether the hooks give exactly what ``output_hidden_states`` gives is checked once per
model on a short input (bit-identical, every requested layer); a model where they do not (an unusual block layout)
falls back to the full ``output_hidden_states`` pass, selecting the requested layers from it.

Causality is read from behaviour, never from a class name or ``is_decoder`` (GPT-2 saves ``is_decoder: false``):
a model is causal when changing the last token of a short input leaves every earlier position's hidden states
bit-identical in every layer.
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

import torch

from elmo_bench.encoders.transformers.dispatch import main_device

log = logging.getLogger(__name__)


class _Stop(Exception):
    """Raised by the hook on the deepest requested block: the rest of the model is not run."""


def find_blocks(model: Any) -> torch.nn.ModuleList | None:
    """The model's list of blocks: the first ``ModuleList`` of exactly ``num_hidden_layers`` modules (BERT's
    ``encoder.layer``, GPT-2's ``h``, Llama's ``layers``, T5's ``block``); None when there is none."""
    count = getattr(model.config, "num_hidden_layers", None)
    for _, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == count:
            return module
    return None


def _hidden_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.Tensor:
    return args[0] if args else kwargs["hidden_states"]


def hooked_states(model: Any, blocks: torch.nn.ModuleList, indices: Sequence[int], **inputs: Any) -> torch.Tensor:
    """The requested hidden states (batch, len(indices), tokens, dim) in the order of ``indices``, in the model's
    dtype; blocks after the deepest requested one (below the last) are not run. (A model spread over devices:
    stacked where the first requested one is.)"""
    states = hooked_state_list(model, blocks, indices, **inputs)
    return torch.stack([state.to(states[0].device) for state in states], dim=1)


def hooked_state_list(model: Any, blocks: torch.nn.ModuleList, indices: Sequence[int],
                      **inputs: Any) -> list[torch.Tensor]:
    """:func:`hooked_states` unstacked: one (batch, tokens, dim) tensor per requested layer, as the model made them
    (no copy, as :func:`state_list`)."""
    last = len(blocks)
    wanted = {i for i in indices if i < last}
    deepest = max(wanted, default=-1)
    taken: dict[int, torch.Tensor] = {}
    handles = []

    def hook_for(index: int):
        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            taken[index] = _hidden_of(args, kwargs)
            if index == deepest and last not in indices:
                raise _Stop
        return hook

    for index in sorted(wanted):
        handles.append(blocks[index].register_forward_pre_hook(hook_for(index), with_kwargs=True))
    try:
        result = model(**inputs)
        taken[last] = result[0]
    except _Stop:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return [taken[i] for i in indices]


def full_states(model: Any, indices: Sequence[int] | None, **inputs: Any) -> torch.Tensor:
    """Every hidden state from ``output_hidden_states`` (batch, layers, tokens, dim), or those of ``indices``."""
    return torch.stack(state_list(model, indices, **inputs), dim=1)


def state_list(model: Any, indices: Sequence[int] | None, **inputs: Any) -> list[torch.Tensor]:
    """:func:`full_states` unstacked: one (batch, tokens, dim) tensor per layer, as the model made them (no copy:
    a caller that picks a few positions of each need not stack every layer first)."""
    states = model(**inputs, output_hidden_states=True).hidden_states
    return [states[i] for i in (range(len(states)) if indices is None else indices)]


def without_kv_cache(model: Any) -> dict[str, Any]:
    """``use_cache=False`` for a model whose forward takes it (decoders): a frozen encoder never generates, and
    the key/value cache of every block would otherwise be built and thrown away (about 1 GB a 8,192-token pass of
    an 8B Llama). Other models: nothing."""
    import inspect

    try:
        takes = "use_cache" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        takes = False
    return {"use_cache": False} if takes and getattr(model.config, "use_cache", None) is not None else {}


def _probe_inputs(model: Any, ids: Sequence[int]) -> dict[str, torch.Tensor]:
    device = main_device(model)
    tensor = torch.tensor([list(ids)], dtype=torch.long, device=device)
    return {"input_ids": tensor, "attention_mask": torch.ones_like(tensor)}


@torch.no_grad()
def hooks_match(model: Any, blocks: torch.nn.ModuleList | None, indices: Sequence[int], ids: Sequence[int]) -> bool:
    """True when :func:`hooked_states` gives, bit for bit, what ``output_hidden_states`` gives for ``indices`` on
    the short input ``ids``."""
    if blocks is None:
        return False
    inputs = _probe_inputs(model, ids)
    try:
        hooked = hooked_states(model, blocks, indices, **inputs)
    except (RuntimeError, KeyError, IndexError, TypeError) as exc:
        log.info("layer hooks do not fit %s (%s): using output_hidden_states", type(model).__name__, exc)
        return False
    return torch.equal(hooked, full_states(model, indices, **inputs))


@torch.no_grad()
def is_causal(model: Any, ids: Sequence[int], other: int) -> bool:
    """True when replacing the last of ``ids`` by ``other`` leaves every earlier position's hidden states
    bit-identical in every layer (a left-to-right model); each input run alone, so both see the same kernels."""
    first = full_states(model, None, **_probe_inputs(model, ids))
    changed = full_states(model, None, **_probe_inputs(model, [*ids[:-1], other]))
    return torch.equal(first[:, :, :-1], changed[:, :, :-1])


def token_batches(lengths: Sequence[int], max_tokens: int | None, batch_size: int) -> list[list[int]]:
    """Windows grouped into forward passes, in order of length (shortest first): each pass holds at most
    ``max_tokens`` padded tokens (count x longest) when set, else at most ``batch_size`` windows in the given
    order (today's batching). Returns lists of window indices."""
    if max_tokens is None:
        order = list(range(len(lengths)))
        return [order[i: i + batch_size] for i in range(0, len(order), batch_size)]
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    for index in order:
        if batches and (len(batches[-1]) + 1) * lengths[index] <= max_tokens:
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches
