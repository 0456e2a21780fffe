"""The one batch type every head takes: per text field its mask, characters, word vectors and ELMo mixes.

The collator fills ``mask``, ``chars``, ``word_ids`` and ``layers``; the embedder adds ``words`` (GloVe vectors)
and the ELMo mixes ``elmo_in`` / ``elmo_out``. ELMo is dropped once, by the ELMo module, with the config's ELMo
dropout; a head drops the other columns of its input (GloVe, its own char CNN features) with its own input dropout
through :meth:`Batch.inputs`, which never touches the ELMo columns again. The checks a head needs (chars present,
ELMo output present when it was built for one) live here, once.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Mapping, Sequence

import torch
from torch import nn


@dataclass
class FieldBatch:
    """One text field (e.g. ``tokens``, or ``premise`` and ``hypothesis``) of a batch."""

    mask: torch.Tensor                       # (batch, time) bool, real tokens first
    chars: torch.Tensor | None = None        # (batch, time, 50) bilm-tf character ids
    word_ids: torch.Tensor | None = None     # (batch, time) rows of the GloVe table
    layers: torch.Tensor | None = None       # (batch, L+1, time, dim) frozen biLM layers
    words: torch.Tensor | None = None        # (batch, time, glove_dim) GloVe vectors, not yet dropped
    elmo_in: torch.Tensor | None = None      # (batch, time, elmo_dim) ScalarMix_in, already dropped once
    elmo_out: torch.Tensor | None = None     # (batch, time, elmo_dim) ScalarMix_out, already dropped once

    def to(self, device: torch.device) -> "FieldBatch":
        """Every tensor of the field on ``device`` (dtypes kept)."""
        return replace(self, **{f.name: _to(getattr(self, f.name), device) for f in fields(self)})


@dataclass
class Batch:
    fields: dict[str, FieldBatch]
    targets: dict[str, torch.Tensor] = field(default_factory=dict)

    @classmethod
    def of(cls, words: Mapping[str, torch.Tensor | None], mask: Mapping[str, torch.Tensor],
           elmo_in: Mapping[str, torch.Tensor | None] | None = None,
           elmo_out: Mapping[str, torch.Tensor | None] | None = None,
           chars: Mapping[str, torch.Tensor | None] | None = None,
           targets: Mapping[str, torch.Tensor] | None = None) -> "Batch":
        """A batch from per-field dicts (heads used outside the engine, tests)."""
        elmo_in, elmo_out, chars = elmo_in or {}, elmo_out or {}, chars or {}
        return cls({name: FieldBatch(mask=m.bool(), chars=chars.get(name), words=words.get(name),
                                     elmo_in=elmo_in.get(name), elmo_out=elmo_out.get(name))
                    for name, m in mask.items()}, dict(targets or {}))

    def to(self, device: torch.device) -> "Batch":
        """The batch with every field tensor and every target on ``device`` (the collator builds batches on the
        CPU; the task model moves each batch to its own device before the embedder sees it)."""
        return Batch({name: f.to(device) for name, f in self.fields.items()},
                     {name: _to(t, device) for name, t in self.targets.items()})

    def mask(self, name: str) -> torch.Tensor:
        return self.fields[name].mask

    def chars(self, name: str, who: str) -> torch.Tensor:
        chars = self.fields[name].chars
        if chars is None:
            raise ValueError(f"{who}: built with a character CNN but the batch has no chars[{name!r}]")
        return chars

    def inputs(self, name: str, dropout: nn.Module | None = None, extra: Sequence[torch.Tensor] = ()) -> torch.Tensor:
        """(batch, time, glove_dim + extra dims + elmo_dim): ``[dropout(words ; extra) ; elmo_in]``.

        Every column is dropped exactly once: GloVe and the head's ``extra`` features (its char CNN) by the head's
        ``dropout``, the ELMo columns earlier by the ELMo module.
        """
        f = self.fields[name]
        own = [t for t in (f.words, *extra) if t is not None]
        parts = []
        if own:
            x = own[0] if len(own) == 1 else torch.cat(own, dim=-1)
            parts.append(dropout(x) if dropout is not None else x)
        if f.elmo_in is not None:
            parts.append(f.elmo_in)
        if not parts:
            raise ValueError(f"the batch has neither word vectors nor ELMo for field {name!r}")
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)

    def elmo_output(self, name: str, dim: int, who: str) -> torch.Tensor | None:
        """ScalarMix_out of ``name`` (batch, time, dim) when the head was built with ``dim`` > 0, else None."""
        if not dim:
            return None
        out = self.fields[name].elmo_out
        if out is None or out.shape[-1] != dim:
            found = "none" if out is None else f"width {out.shape[-1]}"
            raise ValueError(f"{who}: built with elmo_output_dim={dim} but the batch's elmo_out[{name!r}] has {found}")
        return out


def _to(value: torch.Tensor | None, device: torch.device) -> torch.Tensor | None:
    if not isinstance(value, torch.Tensor) or value.device == device:
        return value
    return value.to(device, non_blocking=torch.device(device).type == "cuda")
