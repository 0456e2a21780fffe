"""One range check for every numeric option (run configs, ELMo settings, pretraining): a wrong value is one
ConfigError line naming the key, what was expected and what was found."""
from __future__ import annotations

import math
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError

#: numpy's seed range (``seed=99999999999999999999`` is a config error, not numpy's ValueError)
MAX_SEED = 2**32 - 1


def _show(bound: float) -> str:
    """A bound as the user would type it: 4294967295, not 4.29497e+09."""
    return str(int(bound)) if float(bound).is_integer() and abs(bound) < 1e16 else f"{bound:g}"


def expected_text(kind: type, low: float | None = None, high: float | None = None, low_open: bool = False,
                  high_open: bool = False, optional: bool = False) -> str:
    """What a range allows, in words (``an integer >= 1 or null``): the error's "expected" and a flag's help."""
    bounds = []
    if low is not None:
        bounds.append(f"{'>' if low_open else '>='} {_show(low)}")
    if high is not None:
        bounds.append(f"{'<' if high_open else '<='} {_show(high)}")
    expected = f"{'an integer' if kind is int else 'a number'}{' ' + ' and '.join(bounds) if bounds else ''}"
    return expected + (" or null" if optional else "")


def check_number(key: str, value: Any, kind: type, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False, optional: bool = False) -> Any:
    """``value`` as ``kind`` (int or float) within the bounds, else ConfigError naming ``key``."""
    if value is None and optional:
        return None
    expected = expected_text(kind, low, high, low_open, high_open, optional)
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


@dataclass(frozen=True)
class Range:
    """The values a numeric dataclass field allows (what :func:`check_number` checks)."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    optional: bool = False

    def check(self, key: str, value: Any, optional: bool = False) -> Any:
        return check_number(key, value, self.kind, self.low, self.high, self.low_open, self.high_open,
                            self.optional or optional)

    def expected(self) -> str:
        """The values allowed, in words (a command-line flag's help says them)."""
        return expected_text(self.kind, self.low, self.high, self.low_open, self.high_open, self.optional)


def ranged(default: Any, kind: type, low: float | None = None, high: float | None = None, *, low_open: bool = False,
           high_open: bool = False, optional: bool = False) -> Any:
    """A dataclass field whose range is stated beside its type and default (read by :func:`check_ranges`); a list
    default (a head's layer sizes) becomes a fresh copy per instance."""
    metadata = {"range": Range(kind, low, high, low_open, high_open, optional)}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def default_of(spec: Field) -> Any:
    """A dataclass field's default value (a list default's fresh copy), or MISSING when it has none."""
    if spec.default_factory is not MISSING:
        return spec.default_factory()
    return spec.default


def check_ranges(cls: type, values: Mapping[str, Any], prefix: str, keys: Mapping[str, str] | None = None,
                 optional: bool = False) -> None:
    """Each field of dataclass ``cls`` that states a range (:func:`ranged`), checked in ``values`` (a config
    mapping; ``keys``: field name → its config key where they differ). A missing key is the field's default, or
    None with ``optional`` (a group whose null means "the task's own value")."""
    for spec in fields(cls):
        rule = spec.metadata.get("range")
        if rule is None:
            continue
        key = (keys or {}).get(spec.name, spec.name)
        rule.check(f"{prefix}.{key}", values.get(key, None if optional else default_of(spec)), optional)
