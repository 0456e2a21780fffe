"""Where the shipped small biLM lives (inside the package, so it loads offline on any machine)."""
from __future__ import annotations

from elmo_bench.base.paths import RESOURCES

SHIPPED_DIR = RESOURCES / "bilm"
DEFAULT_OPTIONS = SHIPPED_DIR / "options.json"
DEFAULT_WEIGHTS = SHIPPED_DIR / "weights.hdf5"
