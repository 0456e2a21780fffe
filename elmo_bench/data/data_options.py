"""A task's own ``data`` keys read typed: the dataclass its declaration names (``TaskDeclaration.data``) holds each
key's default once; a reader takes the values the data config sets and the dataclass's defaults for the rest, so no
reader writes a fallback of its own (issue 35). The composed config already holds every default
(conf/config.yaml's ``task_data@data``); the defaults here serve a reader called with a hand-made mapping."""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Mapping, TypeVar

from elmo_bench.base.ranges import check_ranges

Options = TypeVar("Options")

#: a data option's field metadata: False when the key never changes a number (run identity leaves it out)
IDENTITY = "identity"


def data_options(cls: type[Options], data_cfg: Mapping[str, Any]) -> Options:
    """Dataclass ``cls`` from the keys of ``data_cfg`` it names (ranges checked, one line naming ``data.<key>``)."""
    check_ranges(cls, data_cfg, "data")
    return cls(**{spec.name: data_cfg[spec.name] for spec in fields(cls) if spec.name in data_cfg})


def identity_free_keys(cls: type | None) -> tuple[str, ...]:
    """The fields of data options ``cls`` that never change a number (metadata ``identity: False``)."""
    return () if cls is None else tuple(spec.name for spec in fields(cls) if spec.metadata.get(IDENTITY) is False)
