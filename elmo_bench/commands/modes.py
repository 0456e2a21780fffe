"""``elmo-bench modes OVERRIDES... [--stride K]``: the jobs of edge probing's every-mode sweep over one encoder, one
per line.

The modes (Tenney et al. 2019; Tenney, Das & Pavlick 2019) of an encoder with layers 0..L: lexical (layer 0), each
single layer k, each cumulative prefix 0..k and the full learned mix. Lexical, layer 0 and cumulative 0 are one
run, and so are the full mix and cumulative L, so the distinct runs are::

    mix=layer mix.layer=k        k = 0..L    (k = 0: the lexical run)
    mix=cumulative mix.layer=k   k = 1..L-1
    mix=learned                               (the full mix = cumulative L)

2L + 1 runs. The layers are the encoder's: every layer, or those ``encoder.layers`` keeps (``every:8`` on a
33-layer model: 0, 8, 16, 24, 32), each named by its index in the model (``mix.layer=16``). ``--stride K`` keeps
every K-th of them and the last (the rule of ``encoder.layers=every:K``), so a deep model is swept at 2n - 1 runs
for n layers kept, never at a fixed 0..2. The layers depend on the encoder, so no static Hydra list can hold them:
the sweep key ``mix=all_modes`` is expanded here from the encoder (the biLM's options file, a transformers model's
config.json, else the encoder itself), and ``elmo-bench plan`` expands it the same way (:func:`expand_modes`).
Each printed line is one ``python run.py`` job.
"""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Callable, Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import CONF_DIR
from elmo_bench.encoders.kinds import kind_of

if TYPE_CHECKING:  # the annotations only: commands.modes stays light to import
    from elmo_bench.engine.run_config import EncoderPart, RunConfig

#: the sweep key that stands for every mode of the encoder
ALL_MODES = "mix=all_modes"


def strided(layers: Sequence[int], stride: int | None) -> list[int]:
    """Every ``stride``-th of ``layers`` (the model's indices) from the first, and the last: ``encoder.layers=every:K``'s
    rule over the layers an encoder gives (None or 1: all of them)."""
    layers = [int(k) for k in layers]
    if stride is None:
        return layers
    if isinstance(stride, bool) or not isinstance(stride, int) or stride < 1:
        raise ConfigError(f"config: a layer stride expected an integer >= 1, found {stride!r}")
    kept = layers[::stride]
    return kept + ([layers[-1]] if layers and kept[-1] != layers[-1] else [])


def mode_overrides(layers: int | Sequence[int], stride: int | None = None) -> list[tuple[str, list[str]]]:
    """(mode name, its overrides) of every distinct run for an encoder of ``layers`` (its layer count, or the
    model's index of each layer it gives), every ``stride``-th layer and the last when a stride is given; the full
    mix is always the learned mix of all the encoder's layers."""
    ids = list(range(layers)) if isinstance(layers, int) else [int(k) for k in layers]
    if not ids:
        raise ConfigError(f"config: an encoder needs at least one layer for edge probing, found {len(ids)}")
    swept = strided(ids, stride)
    runs = [("lexical" if k == 0 else f"layer {k}", ["mix=layer", f"mix.layer={k}"]) for k in swept]
    runs += [(f"cumulative {k}", ["mix=cumulative", f"mix.layer={k}"]) for k in swept[1:-1]]
    return runs + ([("full", ["mix=learned"])] if len(ids) > 1 else [])


def encoder_layer_ids(encoder: EncoderPart, amp: str = "off") -> list[int]:
    """The model's index of each layer a run's encoder gives (all, or those ``encoder.layers`` keeps), read as
    cheaply as it can be: its kind's ``layer_ids`` (the biLM's options file, a transformers model directory's
    config.json: no weight read), else the encoder built as a run builds it (with the run's ``amp``)."""
    spec = encoder.plain()
    kind = kind_of(spec)
    if kind.layer_ids is not None:
        found = kind.layer_ids(spec, encoder.bilm, False)
        if found is not None:
            return found
    from elmo_bench.encoders.build import build_encoder, layer_ids  # lazy: torch

    return layer_ids(build_encoder(spec, amp))


def expand_modes(jobs: Sequence[Sequence[str]], compose: Callable[[list[str]], Any],
                 stride: int | None = None) -> list[list[str]]:
    """Each job holding ``mix=all_modes`` → one job per mode (its other overrides kept, the mode's appended);
    ``compose(overrides)`` makes a job's RunConfig (to read its encoder's layers)."""
    out: list[list[str]] = []
    for job in jobs:
        if ALL_MODES not in job:
            out.append(list(job))
            continue
        rest = [o for o in job if o != ALL_MODES]
        if any(o.startswith("mix.layer=") for o in rest):
            raise ConfigError("config: mix=all_modes sets mix.layer itself; drop the mix.layer override")
        run = compose(rest)
        layers = encoder_layer_ids(run.encoder, run.runtime.amp)
        out.extend([*rest, *overrides] for _, overrides in mode_overrides(layers, stride))
    return out


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="elmo-bench modes",
                            description="The jobs of edge probing's every-mode sweep (lexical, each layer, each "
                                        "cumulative prefix, the full mix) for the encoder the overrides choose.")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides as run.py takes them (mix=all_modes is added)")
    parser.add_argument("--stride", type=int, default=None, metavar="K",
                        help="every K-th of the encoder's layers and the last (as encoder.layers=every:K), "
                             "each with its single-layer and cumulative run, and the full mix; default: every layer")
    parser.add_argument("--format", choices=["lines", "json"], default="lines",
                        help="lines: one job's overrides per line (default); json: [{mode, overrides}]")
    return parser


def compose(overrides: Sequence[str]) -> RunConfig:
    """A run's RunConfig, composed as run.py composes it (the encoder and biLM parts are what is read here)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from elmo_bench.commands.hydra_setup import register_resolvers  # lazy: omegaconf
    from elmo_bench.engine.config_door import run_config  # lazy: omegaconf

    register_resolvers()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return run_config(hydra_compose("config", overrides=list(overrides)))


def modes_main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    rest = [o for o in args.overrides if o != ALL_MODES]
    if any(o.startswith(("mix=", "mix.layer=")) for o in rest):
        raise ConfigError("config: elmo-bench modes chooses the mix itself; drop the mix= and mix.layer= overrides")
    run = compose(rest)
    runs = mode_overrides(encoder_layer_ids(run.encoder, run.runtime.amp), args.stride)
    if args.format == "json":
        sys.stdout.write(json.dumps([{"mode": name, "overrides": [*rest, *o]} for name, o in runs]) + "\n")
    else:
        sys.stdout.write("".join(" ".join([*rest, *o]) + "\n" for _, o in runs))
    return 0
