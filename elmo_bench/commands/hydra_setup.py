"""OmegaConf resolvers used by conf/: the repository root and run-directory suffixes."""
from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

REPO_ROOT = Path(__file__).resolve().parents[1]
#: keys already spelled out in the run directory path
_IN_PATH = ("task", "embedder", "seed")
#: key prefixes that say where files go, not what is computed (a run's identity check covers the rest)
_NOT_IN_PATH = ("paths.", "hydra.")


def run_suffix(override_dirname: str) -> str:
    """The part of Hydra's override dirname not already in the path, as '/k=v,k=v' (or '')."""
    items = [item for item in override_dirname.split(",") if item and item.split("=", 1)[0] not in _IN_PATH
             and not item.split("=", 1)[0].lstrip("+~").startswith(_NOT_IN_PATH)]
    return ("/" + ",".join(items).replace("/", "_")) if items else ""


def register_resolvers() -> None:
    if not OmegaConf.has_resolver("repo_root"):
        OmegaConf.register_new_resolver("repo_root", lambda: str(REPO_ROOT))
    if not OmegaConf.has_resolver("run_suffix"):
        OmegaConf.register_new_resolver("run_suffix", run_suffix)
