"""Shared test helpers: where ../shared is, and the skip marker for tests that need it."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests import hydra_speedup

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "elmo_fixtures"
DATA = SHARED / "data"

needs_fixtures = pytest.mark.skipif(not FIXTURES.exists(), reason="../shared/elmo_fixtures not present (bilm-tf fixture)")
needs_data = pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")

torch.set_num_threads(1)
hydra_speedup.install()   # composes what Hydra composes, in two thirds of the time (tests/hydra_speedup.py)
