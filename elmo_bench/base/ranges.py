"""One range check for every numeric option (run configs, ELMo settings, pretraining): a wrong value is one
ConfigError line naming the key, what was expected and what was found."""
from __future__ import annotations

import math
from typing import Any

from elmo_bench.base.errors import ConfigError


def _show(bound: float) -> str:
    """A bound as the user would type it: 4294967295, not 4.29497e+09."""
    return str(int(bound)) if float(bound).is_integer() and abs(bound) < 1e16 else f"{bound:g}"


def check_number(key: str, value: Any, kind: type, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False, optional: bool = False) -> Any:
    """``value`` as ``kind`` (int or float) within the bounds, else ConfigError naming ``key``."""
    if value is None and optional:
        return None
    bounds = []
    if low is not None:
        bounds.append(f"{'>' if low_open else '>='} {_show(low)}")
    if high is not None:
        bounds.append(f"{'<' if high_open else '<='} {_show(high)}")
    expected = f"{'an integer' if kind is int else 'a number'}{' ' + ' and '.join(bounds) if bounds else ''}"
    if optional:
        expected += " or null"
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and kind is int and isinstance(value, float):
        ok = value.is_integer()
    if ok:
        number = kind(value)
        ok = math.isfinite(number) and not (
            (low is not None and (number < low or (low_open and number == low)))
            or (high is not None and (number > high or (high_open and number == high))))
    if not ok:
        raise ConfigError(f"config: {key} expected {expected}, found {value!r}")
    return number
