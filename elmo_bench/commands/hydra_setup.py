"""OmegaConf resolvers used by conf/: the repository and default data roots (elmo_bench.base.paths) and
run-directory suffixes; and the typed group schemas conf/ names (elmo_bench.engine.config_schema)."""
from __future__ import annotations

from omegaconf import OmegaConf

from elmo_bench.base.paths import DATA_ROOT, REPO
from elmo_bench.engine.config_schema import register_schemas

#: keys already spelled out in the run directory path
_IN_PATH = ("task", "embedder", "seed")
#: key prefixes that say where files go, not what is computed (a run's identity check covers the rest)
_NOT_IN_PATH = ("paths.", "hydra.")


def same_run_spelling(items: list[str]) -> list[str]:
    """Overrides with the aliases of one run spelled one way, sorted as Hydra sorts them: ``mix=lexical`` and
    ``mix=cumulative,mix.layer=0`` are ``mix=layer,mix.layer=0`` (conf/mix/lexical.yaml, canonical_mix)."""
    layer = next((i.split("=", 1)[1] for i in items if i.startswith("mix.layer=")), None)
    if "mix=lexical" in items or ("mix=cumulative" in items and layer == "0"):
        items = [i for i in items if i not in ("mix=lexical", "mix=cumulative")] + ["mix=layer"]
        items += [] if layer is not None else ["mix.layer=0"]
        return sorted(items)
    return items


def run_suffix(override_dirname: str) -> str:
    """The part of Hydra's override dirname not already in the path, as '/k=v,k=v' (or '')."""
    items = [item for item in override_dirname.split(",") if item and item.split("=", 1)[0] not in _IN_PATH
             and not item.split("=", 1)[0].lstrip("+~").startswith(_NOT_IN_PATH)]
    items = same_run_spelling(items)
    return ("/" + ",".join(items).replace("/", "_")) if items else ""


def register_resolvers() -> None:
    """Everything composing conf/ needs: the resolvers, and the schemas (``trainer/schema``, ``mix/schema``) that
    the group options' defaults lists name."""
    register_schemas()
    if not OmegaConf.has_resolver("repo_root"):
        OmegaConf.register_new_resolver("repo_root", lambda: str(REPO))
    if not OmegaConf.has_resolver("data_root"):
        OmegaConf.register_new_resolver("data_root", lambda: str(DATA_ROOT))
    if not OmegaConf.has_resolver("run_suffix"):
        OmegaConf.register_new_resolver("run_suffix", run_suffix)
