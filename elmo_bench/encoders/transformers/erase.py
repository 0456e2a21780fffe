"""An eraser inside a transformers encoder's forward pass (``encoder.erase``, elmo_bench.encoders.erasing): hidden
state k erased where block k receives it and where the model reports it."""
from __future__ import annotations

from typing import Any

import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.transformers.hf_forward import find_blocks


def install_hook(encoder: Any, eraser: Any) -> None:
    """A transformer: a forward pre-hook on the model notes which positions are words (not special tokens, not
    padding), a forward pre-hook on block k erases its input (hidden state k) there, and a forward hook on the model
    reports hidden state k as block k received it (``output_hidden_states`` keeps it from before the hook)."""
    blocks = find_blocks(encoder.model)
    if blocks is None:
        raise ConfigError(f"config: encoder.erase: {type(encoder.model).__name__} has no list of "
                          f"num_hidden_layers blocks to hook; erase another encoder")
    special = torch.tensor(sorted(set(encoder.tokenizer.all_special_ids)), dtype=torch.long)
    noted: dict[str, torch.Tensor] = {}
    stream = eraser.streams[0]

    def note(_: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        ids = kwargs["input_ids"] if "input_ids" in kwargs else args[0]
        attention = kwargs["attention_mask"] if kwargs.get("attention_mask") is not None else torch.ones_like(ids)
        noted.pop("erased", None)   # a pass that stops before block k reports nothing of it
        noted["keep"] = attention.bool() & ~torch.isin(ids, special.to(ids.device))

    def erase(_: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        hidden = args[0] if args else kwargs["hidden_states"]
        erased = torch.where(noted["keep"].to(hidden.device).unsqueeze(-1), stream(hidden), hidden)  # (device_map)
        noted["erased"] = erased
        return ((erased, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": erased})

    def report(_: Any, args: Any, kwargs: Any, output: Any) -> Any:
        states = getattr(output, "hidden_states", None)
        if states is not None and "erased" in noted:
            erased = noted["erased"].to(states[eraser.layer].device)  # a spread model's outputs come back together
            output.hidden_states = (*states[: eraser.layer], erased, *states[eraser.layer + 1:])
        return output

    encoder.model.register_forward_pre_hook(note, with_kwargs=True)
    blocks[eraser.layer].register_forward_pre_hook(erase, with_kwargs=True)
    encoder.model.register_forward_hook(report, with_kwargs=True)
