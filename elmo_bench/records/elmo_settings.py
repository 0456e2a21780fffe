"""The ELMo settings of a run: one :class:`ElmoSettings` object, built from the task's ``elmo:`` block and the
``mix`` group, passed whole to the token embedder and written as results.json's ``elmo``.

Its field defaults are the one source of what a task uses where its task YAML's ``elmo:`` block
leaves a key out: :data:`TASK_ELMO_DEFAULTS` (keyed by the ``elmo:`` / ``mix`` key names) is read off them, for the
engine, run identity and the report (which must know a task's own value to tell an ablation arm from the task's
default run). The ranges are stated here too (``__post_init__``), so a settings object is valid wherever it is made.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Mapping, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import check_number, check_ranges, ranged

#: where ELMo goes in a task model: a head's input, its output (integrator / after the contextual layer), or both
PLACEMENTS = ("input", "output", "both")
#: a field whose config key (``mix.K``, ``task.elmo.K``) is spelled otherwise
CONFIG_KEY = {"l2_coef": "lambda", "layer_index": "layer"}
#: how a mix combines the biLM layers (elmo_bench.modules.elmo.ScalarMix)
MODES = ("learned", "average", "top", "layer", "cumulative")


@dataclass(frozen=True)
class ElmoSettings:
    """Everything a task's ELMo part takes: placement, mix mode (and its layer for ``mode=layer``), layer norm,
    the L2 penalty on the pre-softmax layer scalars (``lambda`` in configs), initial gamma and the ELMo dropout."""

    placement: str = "input"
    l2_coef: float = ranged(0.0, float, 0)
    layer_norm: bool = False
    gamma_init: float = ranged(1.0, float)
    dropout: float = ranged(0.5, float, 0, 1, high_open=True)
    mode: str = "learned"
    layer_index: int | None = None

    def __post_init__(self) -> None:
        for key, value, allowed in (("placement", self.placement, PLACEMENTS), ("mode", self.mode, MODES)):
            if value not in allowed:
                raise ConfigError(f"config: ELMo {key} expected one of {list(allowed)}, found {value!r}")
        check_ranges(ElmoSettings, {CONFIG_KEY.get(k, k): v for k, v in asdict(self).items()}, "elmo", CONFIG_KEY)
        if self.mode in ("layer", "cumulative"):
            check_number("mix.layer", self.layer_index, int, 0)

    @classmethod
    def from_config(cls, task_elmo: Mapping[str, Any], mix: Mapping[str, Any]) -> "ElmoSettings":
        """The settings a run uses: each the ``mix`` override where set, else the task's ``elmo:`` value, else
        the default above (:func:`effective_settings`); mode and layer from ``mix``."""
        picked = effective_settings(task_elmo, mix)
        return cls(placement=picked["placement"], l2_coef=float(picked["lambda"]),
                   layer_norm=bool(picked["layer_norm"]), gamma_init=float(picked["gamma_init"]),
                   dropout=float(picked["dropout"]), mode=mix["mode"], layer_index=mix.get("layer"))

    def record(self) -> dict[str, Any]:
        """results.json's ``elmo``: placement, l2_coef, layer_norm, gamma_init, dropout, mode, layer_index."""
        return asdict(self)


#: a setting's key → the key results.json's ``elmo`` records the value the run used under
RECORDED_KEY: dict[str, str] = {"placement": "placement", "lambda": "l2_coef", "layer_norm": "layer_norm",
                                "gamma_init": "gamma_init", "dropout": "dropout"}
TASK_ELMO_DEFAULTS: dict[str, Any] = {key: getattr(ElmoSettings(), field) for key, field in RECORDED_KEY.items()}


def effective_settings(task_elmo: Mapping[str, Any], mix: Mapping[str, Any]) -> dict[str, Any]:
    """Each ELMo setting as a run uses it: the ``mix`` override where set (not None), else the task's ``elmo:``
    value, else TASK_ELMO_DEFAULTS'. One rule for the engine, run identity and the report's task defaults."""
    out = {}
    for key, default in TASK_ELMO_DEFAULTS.items():
        override = mix.get(key)
        out[key] = override if override is not None else task_elmo.get(key, default)
    return out


def canonical_mix(mix: Mapping[str, Any], layers: int | Sequence[int]) -> dict[str, Any]:
    """The ``mix`` group as the run it is: ``cumulative`` over the encoder's first layer only is that one layer (the
    lexical run) and over all of them the learned mix, so each pair is one run (one identity, one record); any other
    mix is returned as it is. ``layers``: the encoder's layer count, or the model's index of each layer it gives
    (``encoder.layers=every:8``: 0, 8, ..., 32), since ``mix.layer`` names a layer by its index in the model, never by
    its position among the layers kept. ConfigError when the layer of a cumulative or one-layer mix is not one of
    the encoder's (one line where the encoder's layers are known: run.py, ``elmo-bench plan``)."""
    ids = list(range(layers)) if isinstance(layers, int) else [int(i) for i in layers]
    out = dict(mix)
    if out.get("mode") not in ("layer", "cumulative"):
        return out
    top = out.get("layer")
    if not isinstance(top, int) or isinstance(top, bool) or top not in ids:
        shown = f"in 0..{len(ids) - 1} (the encoder has {len(ids)} layers)" if ids == list(range(len(ids))) else \
            f"among the encoder's layers {ids} (the model's indices that encoder.layers keeps)"
        raise ConfigError(f"config: mix={out['mode']} expected mix.layer {shown}, found {top!r}")
    if out["mode"] == "layer":
        return out
    if top == ids[0]:
        out.update(name="layer", mode="layer", layer=top)
    elif top == ids[-1]:
        out.update(name="learned", mode="learned", layer=None)
    return out


def mix_position(settings: ElmoSettings, layers: Sequence[int]) -> ElmoSettings:
    """``settings`` with ``layer_index`` (the model's index of a layer, as ``mix.layer`` names it) made the
    position of that layer among the encoder's ``layers`` (its model indices, in the order it gives them): what
    the scalar mix indexes. The record keeps the model's index."""
    if settings.layer_index is None or list(layers) == list(range(len(layers))):
        return settings
    return replace(settings, layer_index=list(layers).index(settings.layer_index))
