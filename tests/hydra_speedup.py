"""A faster Hydra for the test process, composing exactly what Hydra composes.

Hydra 1.3 builds, for every node of a defaults tree, a DictConfig of every known group choice
(``defaults_list._create_interpolation_map``), and uses it only when a default of that node is interpolated (our
``${budget}_${probe}`` ones): most of the 30-odd nodes per composition have none, and building those maps was a third
of a composition's CPU time (0.17 s → 0.12 s). The suite composes thousands of configs (the docs check alone ~300),
so the map is built only where Hydra reads it. ``tests/test_hydra_speedup.py`` composes configs with and without it
and compares them."""
from __future__ import annotations

from typing import Any, Callable

from hydra._internal import defaults_list
from hydra.core.default_element import InputDefault

_ORIGINAL: Callable[..., Any] = defaults_list._create_interpolation_map


def _map_where_read(overrides: Any, defaults: list[Any], self_added: bool) -> Any:
    """Hydra's map when a default of this node is interpolated (the only case that reads it), else None."""
    if any(isinstance(d, InputDefault) and d.is_interpolation() for d in defaults):
        return _ORIGINAL(overrides, defaults, self_added)
    return None


def install() -> None:
    defaults_list._create_interpolation_map = _map_where_read


def uninstall() -> None:
    defaults_list._create_interpolation_map = _ORIGINAL
