"""One sweep over encoder kinds, each with its own keys (issue 56 item 3)::

    python run.py -m probe=ridge encoder=bilm,transformers encoder.path=DIR

Hydra's multirun gives every job the same overrides, and each encoder option (its kind's declared option, or conf/encoder/<option>.yaml) has its
own keys, so the biLM's job refused ``encoder.path`` ("Key 'path' is not in struct") and the biLM beside a model
took two commands. Now:

* run.py (and ``elmo-bench plan``) pass an ``encoder.<key>=v`` that one of the swept options lacks as
  ``++encoder.<key>=v`` (:func:`encoder_sweep_args`), so Hydra composes every job;
* the door (elmo_bench.engine.config_door) leaves such a key out of a multirun job whose option lacks it, when
  another encoder option has it (:func:`drop_foreign_keys`): that job is the kind alone (its identity, record and
  directory name, elmo_bench.commands.hydra_setup, are those of ``encoder=<kind>`` without the key); outside a
  multirun the same ``++encoder.<key>`` is one line, and a key no encoder option has is refused as before.
"""
from __future__ import annotations

import functools
from typing import Any, Mapping, MutableMapping, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import CONF_DIR
from elmo_bench.encoders.kinds import encoder_kinds, option_node

GROUP = "encoder"


@functools.lru_cache(maxsize=None)
def option_keys(option: str) -> frozenset[str] | None:
    """The top-level keys of encoder option ``option`` (conf/encoder/<option>.yaml and the options its defaults
    list names, else the option an encoder kind declares: elmo_bench.encoders.kinds), or None when there is
    neither."""
    from omegaconf import OmegaConf  # lazy: omegaconf

    path = CONF_DIR / GROUP / f"{option}.yaml"
    if not path.is_file():
        kind = encoder_kinds().get(option)
        node = option_node(kind) if kind is not None else None
        return None if node is None else frozenset(node)
    node = OmegaConf.to_container(OmegaConf.load(path)) or {}
    keys = {str(key) for key in node if key != "defaults"}
    for entry in node.get("defaults") or []:
        if isinstance(entry, str) and entry != "_self_" and entry != option:
            keys |= option_keys(entry.lstrip("/").removeprefix(f"{GROUP}/")) or set()
    return frozenset(keys)


def known_keys() -> frozenset[str]:
    """Every key some encoder option has."""
    options = {*(path.stem for path in (CONF_DIR / GROUP).glob("*.yaml")), *encoder_kinds()}
    return frozenset().union(*(option_keys(option) or frozenset() for option in options))


def swept_options(args: Sequence[str]) -> list[str]:
    """The encoder options a command line sweeps (``encoder=a,b``): [] when it chooses one or none."""
    for arg in args:
        name, sep, value = arg.partition("=")
        if sep and name == GROUP and "," in value and not any(c in value for c in "()[]{}*"):
            return [option.strip() for option in value.split(",") if option.strip()]
    return []


def encoder_sweep_args(argv: list[str]) -> list[str]:
    """``argv`` (program name first) with each ``encoder.<key>=v`` that one of the swept encoder options lacks,
    while another has it, passed as ``++encoder.<key>=v`` (module docstring); unchanged without such a sweep."""
    options = swept_options(argv[1:])
    keys = [option_keys(option) for option in options]
    if len(options) < 2 or any(k is None for k in keys):
        return argv   # one option, or one that is not a file here: Hydra's own message
    out = argv[:1]
    for arg in argv[1:]:
        top = arg.split("=", 1)[0].split(".")[1] if arg.startswith(f"{GROUP}.") and "=" in arg else None
        lacking = top is not None and any(top not in k for k in keys) and any(top in k for k in keys)
        out.append(f"++{arg}" if lacking else arg)
    return out


def drop_foreign_keys(cfg: MutableMapping[str, Any], overrides: Sequence[str], base: Mapping[str, Any] | None,
                      multirun: bool) -> list[str]:
    """The overrides less each ``++encoder.<key>`` that the job's encoder option lacks (``base``: the config
    composed without the ``++`` overrides) and another option has: in a multirun its key is taken out of
    ``cfg.encoder`` (the job is the kind alone); in a single run, ConfigError naming the options that have it."""
    if base is None or not any(o.startswith(f"++{GROUP}.") for o in overrides):
        return list(overrides)
    own = set((base.get(GROUP) or {}).keys())
    kept = []
    for text in overrides:
        top = text.split("=", 1)[0][2:].split(".")[1] if text.startswith(f"++{GROUP}.") else None
        if top is None or top in own or top not in known_keys():
            kept.append(text)
            continue
        if not multirun:
            kind = (base.get(GROUP) or {}).get("kind")
            raise ConfigError(f"config: {GROUP}.{top} (from {text.split('=', 1)[0]}) is not a key of {GROUP} kind "
                              f"{kind}; only in a sweep over encoder kinds (python run.py -m {GROUP}={kind},<other> "
                              f"{GROUP}.{top}=...) does a key apply to just the kinds that have it")
        encoder = cfg[GROUP]
        if top in encoder:
            from omegaconf import open_dict  # lazy: omegaconf

            with open_dict(encoder):
                del encoder[top]
    return kept


def foreign_items(items: Sequence[str], kind: str | None) -> list[str]:
    """The override-dirname items (``++encoder.<key>=v``) of keys that encoder kind ``kind`` lacks and another
    option has: a multirun job over encoder kinds leaves them out of its directory's name."""
    own = option_keys(str(kind)) if kind else None
    if own is None:
        return []
    return [item for item in items if item.startswith(f"++{GROUP}.")
            and (top := item.split("=", 1)[0][2:].split(".")[1]) not in own and top in known_keys()]
