"""Hydra override values written by the commands that turn flags into a run's overrides (the probe aliases, the
encoder kinds' command-line hooks)."""
from __future__ import annotations

from typing import Any


def quoted(value: Any) -> str:
    """``value`` as a Hydra override value: a quoted string (paths with ``=``, ``,`` or spaces stay one value)."""
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"
