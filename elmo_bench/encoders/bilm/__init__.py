"""``encoder=bilm`` (the default kind): the project's biLM (bilm-tf layout, elmo_bench.bilm) from the ``bilm`` config
group (``bilm.options`` / ``bilm.weights``: shipped, fixture, custom, adapted, random).

The kind's folder: encoder.py (the Encoder over a loaded biLM, its identity and cache id: the bare weights hash, as
before encoders existed) and random.py (``bilm=random``: all or the LSTMs drawn anew). This module declares the kind
and its hooks (elmo_bench.encoders.kinds) and imports neither until a hook runs.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.overrides import quoted
from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.encoders.bilm.series import architecture, checkpoint, checkpoint_label
from elmo_bench.encoders.costs import EncoderCost, bilm_flops_per_position
from elmo_bench.encoders.erase_settings import OFF as ERASE_OFF
from elmo_bench.encoders.kinds import EncoderKind, Erasure
from elmo_bench.encoders.random_init import randomise

NAME = "bilm"
#: what ``bilm.random_init`` (bilm=random) can draw: every weight, or the LSTMs under the trained token layer
RANDOM_MODES = ("all", "lstm")


def load(spec: Mapping[str, Any], files: Any) -> tuple[Any, dict[str, Any]]:
    """The biLM of the group's files (``bilm=random``: its random twin) and the record results.json keeps under
    ``bilm``."""
    from elmo_bench.encoders.bilm.encoder import BiLMEncoder, load_bilm_info  # lazy: torch
    bilm, info = load_bilm_info(files)
    made = BiLMEncoder(bilm, info["hash"], info)
    if files.random_init:             # bilm=random: the architecture with random weights
        made = randomise(made, files.random_init, int(files.random_seed or 0))
        info = made.info
    return made, info


def price(spec: Mapping[str, Any], options: Any, options_source: str, sentences: Sequence[Sequence[str]],
          amp: Any = "off") -> Any:
    """The biLM formula over its options (elmo_bench.encoders.costs.bilm_flops_per_position); each segment adds
    its ``<S>`` and ``</S>`` positions."""
    return EncoderCost(NAME, bilm_flops_per_position(options), options.n_layers + 1, options.output_dim,
                       options_source, segment_markers=True, options_file=options_source)


def layer_ids(spec: Mapping[str, Any], files: Any, quick: bool) -> list[int] | None:
    """L + 1 layers from the options file (nothing loaded); a missing file is one line (``quick``: unknown)."""
    path = Path(str(files.options))
    if not path.is_file():
        if quick:
            return None
        raise ConfigError(f"{path}: biLM options not found (expected the options.json of bilm={files.name})")
    return list(range(BiLMOptions.load(str(path)).n_layers + 1))


def from_args(args: Any, name: str | None) -> Any:
    """``--options/--weights``: the biLM they name."""
    from elmo_bench.encoders.bilm.encoder import load_bilm_encoder  # lazy: torch

    return load_bilm_encoder(args.options, args.weights, name)


def overrides(args: Any) -> list[str]:
    """``--options/--weights`` and ``--random-init/--random-seed`` as the ``bilm`` group's overrides."""
    out: list[str] = []
    random_init = getattr(args, "random_init", None)
    custom = Path(args.options).resolve() != DEFAULT_OPTIONS.resolve() or \
        Path(args.weights).resolve() != DEFAULT_WEIGHTS.resolve()
    if random_init:
        out += ["bilm=random", f"bilm.random_init={random_init}", f"bilm.random_seed={args.random_seed}"]
    elif custom:  # the test biLM has its own option (its records say "fixture", as they always did)
        out += ["bilm=fixture" if "elmo_fixtures" in str(args.options) else "bilm=custom"]
    if custom:
        out += [f"bilm.options={quoted(args.options)}", f"bilm.weights={quoted(args.weights)}"]
    return out


def run_label(root: Mapping[str, Any]) -> str:
    """A probe run's directory names the biLM by its group's name (shipped, random, custom, ...), and by its weights
    file's label when the files are not the group's own (each checkpoint of a series: series.checkpoint_label)."""
    name = str((root.get(NAME) or {}).get("name") or NAME)
    label = checkpoint_label(root)
    return f"{name}-{label}" if label else name


def _top_from_files(spec: Mapping[str, Any], bilm_options: str | None) -> int | None:
    """The top LSTM layer, from the options file (None without one)."""
    if not bilm_options or not Path(bilm_options).is_file():
        return None
    return int(json.loads(Path(bilm_options).read_text())["lstm"]["n_layers"])


def _widths(encoder: Any, layer: int) -> list[int]:
    """[P] for the token layer, [P, P] (forward, backward) for an LSTM layer."""
    half = int(encoder.dim) // 2
    return [half] if layer == 0 else [half, half]


def _install(encoder: Any, eraser: Any) -> None:
    encoder.bilm.lstm.eraser = eraser


def _randomise(encoder: Any, mode: str, seed: int) -> Any:
    from elmo_bench.encoders.bilm.random import randomise_bilm  # lazy: torch

    return randomise_bilm(encoder, mode, seed)


#: ``encoder=bilm`` (the default): loaded from the ``bilm`` group (load), not built from the encoder group
ENCODER_KIND = EncoderKind(
    "bilm", None, conf={
        # The project's biLM, from the bilm group (bilm=shipped|fixture|custom|adapted|...): today's default, so
        # leaving encoder= out changes nothing. Its identity is the biLM's weights hash (the activation cache key).
        "cache_dtype": "fp16",  # activation cache storage: fp16 (default) | fp32 (layers beyond +-65504, e.g. T5)
        "erase": dict(ERASE_OFF),  # amnesic probing inside the forward pass (docs/bits-and-erasure.md): off
    }, default=True, title="the biLM", groups=(NAME,), load=load, random_modes=RANDOM_MODES,
    randomise=_randomise, random_via="bilm=random bilm.random_init=all|lstm",
    erasure=Erasure(lambda encoder: int(encoder.num_layers) - 1, _top_from_files, _widths, _install, per_stream=True),
    lm_head=True, packages=("elmo_bench.bilm",),
    price=price, layer_ids=layer_ids, from_args=from_args, overrides=overrides, run_label=run_label,
    run_keys=(NAME, f"{NAME}.options", f"{NAME}.weights"), checkpoint=checkpoint, architecture=architecture)
