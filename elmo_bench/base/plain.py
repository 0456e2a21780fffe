"""Typed declarations as plain Python: the type inside an optional hint (what a config node or a type check is
made of) and a declaration's values as JSON's dicts and lists (what a record or an export holds)."""
from __future__ import annotations

import types
import typing
from typing import Any, Mapping


def optional_parts(hint: Any) -> tuple[Any, bool]:
    """``float | None`` → (float, True); ``int`` → (int, False)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = typing.get_args(hint)
        return next(arg for arg in args if arg is not type(None)), type(None) in args
    return hint, False


def plain_data(value: Any) -> Any:
    """Mappings as dicts with string keys and tuples (or lists) as lists, all the way down."""
    if isinstance(value, Mapping):
        return {str(key): plain_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(item) for item in value]
    return value
