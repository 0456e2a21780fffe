"""Issue 35 item 6: imports are sorted one way, the way the linter configured in pyproject.toml ([tool.ruff],
rule I: standard library, third-party, first-party, each block sorted) sorts them. `ruff check --fix .` sorts a
file; this test fails on any file it would change. Sorting is cosmetic for run identity
(elmo_bench.engine.code_identity ignores the order of a block of imports)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytest.importorskip("ruff", reason="ruff is in the dev extra: pip install -e '.[dev]'")


def _ruff(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """ruff with the repository's configuration, writing no cache beside the files it reads."""
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_every_import_block_is_sorted():
    done = _ruff(".", cwd=REPO)
    assert done.returncode == 0, f"imports not sorted (run `ruff check --fix .`):\n{done.stdout[-3000:]}"


UNSORTED = """from __future__ import annotations

from elmo_bench.base.errors import ConfigError
import torch
import json
from tasks.pos.config import DataOptions
"""
SORTED = """from __future__ import annotations

import json

import torch

from elmo_bench.base.errors import ConfigError
from tasks.pos.config import DataOptions
"""


def test_a_planted_unsorted_file_fails_and_is_sorted_as_the_configuration_says(tmp_path):
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    planted = tmp_path / "planted.py"
    planted.write_text(UNSORTED)
    done = _ruff(".", cwd=tmp_path)
    assert done.returncode == 1 and "I001" in done.stdout and "planted.py" in done.stdout
    assert _ruff("--fix", ".", cwd=tmp_path).returncode == 0
    assert planted.read_text() == SORTED
