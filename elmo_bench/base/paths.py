"""The roots every other path hangs from, computed once: no module counts ``Path(__file__).parents[N]`` (a count
that silently points elsewhere when a module moves).

- ``PACKAGE``: the ``elmo_bench`` package directory (shipped resources live below it);
- ``REPO``: the directory holding the package: the repository checkout (``conf/``, ``.cache/``, ``results/``, the
  git history ``results.json`` records) for a source or editable install;
- ``DATA_ROOT``: the default ``paths.data_root``, the ``shared/data`` folder beside the checkout. conf/config.yaml
  reads it through the ``${data_root:}`` resolver and the probe CLIs through their ``--data-root`` default, so the
  default is written here only.
"""
from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parent
RESOURCES = PACKAGE / "resources"
#: conf/ of the checkout; an installed (non-editable) package carries it as elmo_bench/conf (the elmo_bench/conf
#: symlink of the checkout, shipped as package data)
CONF_DIR = REPO / "conf" if (REPO / "conf").is_dir() else PACKAGE / "conf"
DATA_ROOT = REPO.parent / "shared" / "data"
CACHE_DIR = REPO / ".cache"
