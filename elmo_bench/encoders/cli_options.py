"""The ``--encoder/--model/--pooling/--revision`` options shared by ``embed``, ``extract`` and the probe commands
(``elmo-bench probe NAME``, elmo_bench.commands.probe_command).

``--encoder bilm`` (default) keeps each command's ``--options/--weights``; ``--encoder transformers --model DIR|NAME
[--pooling auto] [--revision REV]``; ``--encoder hdf5 --model FILE``; ``--encoder manylangs --model DIR``;
``--encoder python --model pkg.module.Class``. ``embed`` and ``extract`` take the same extraction options besides
(:func:`add_extraction_arguments`: ``--layers``, ``--dtype``, ``--max-tokens``, ``--batch-size``, ``--device``),
defined once here so that the two commands cannot drift apart.
"""
from __future__ import annotations

import argparse
from typing import Any

from elmo_bench.base.arguments import positive_int
from elmo_bench.base.errors import ConfigError
from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
from elmo_bench.encoders.build import build_encoder, encoder_record
from elmo_bench.encoders.kinds import EncoderKind, default_kind, encoder_kinds
from elmo_bench.encoders.protocol import cache_id
from elmo_bench.encoders.random_init import modes

#: ``embed``'s sentences per encoder batch when ``--batch-size`` is not given
EMBED_BATCH_SIZE = 64


def add_encoder_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--encoder", default=default_kind().name, choices=tuple(encoder_kinds()),
                        help="which frozen encoder gives the layers (default: the biLM of --options/--weights)")
    parser.add_argument("--model", default=None,
                        help="transformers: model directory or hub name; hdf5: the file; manylangs: the model "
                             "directory; python: pkg.module.Class")
    parser.add_argument("--pooling", default="auto", choices=["auto", "first", "last", "mean"],
                        help="transformers: a word's vector from its subwords (default auto: last for a model that "
                             "behaves causally, first otherwise)")
    parser.add_argument("--revision", default=None, help="transformers: hub revision (default: the main branch)")


def add_extraction_arguments(parser: argparse.ArgumentParser) -> None:
    """Everything ``embed`` and ``extract`` take about the encoder and how it runs, one definition for both (issue
    56: ``extract`` had no large-model options while the docs said it took ``embed``'s): the biLM's
    ``--options/--weights``, the encoder options, the layers kept, the weights' dtype, the subword tokens a pass,
    the sentences a batch and the device."""
    parser.add_argument("--options", default=str(DEFAULT_OPTIONS), help="options.json (default: the shipped biLM)")
    parser.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="weights.hdf5 (default: the shipped biLM)")
    add_encoder_arguments(parser)
    parser.add_argument("--layers", default="all",
                        help="all | top | average | every:K | comma-separated layer indices such as 0,2 (0 = the "
                             "embedding output; a transformer stops after the deepest one; extract: all, every:K "
                             "or indices, and a subset with --encoder transformers only)")
    parser.add_argument("--dtype", default=None, choices=["float32", "bfloat16", "float16"],
                        help="transformers: the weights' dtype (default float32); the layers are stored as before "
                             "(embed: float32; extract: --cache-dtype)")
    parser.add_argument("--max-tokens", type=positive_int, default=None,
                        help="transformers: subword tokens per forward pass (default: --encoder's windows per pass); "
                             "bounds memory, the vectors the same up to rounding (one fp16 step in a few values)")
    parser.add_argument("--batch-size", type=positive_int, default=None,
                        help=f"sentences per encoder batch (>= 1; default: embed {EMBED_BATCH_SIZE}; extract the "
                             f"activation cache's batches of up to 4096 words, as a run's)")
    parser.add_argument("--device", default="auto",
                        help="auto | cpu | cuda | cuda:N: where the encoder computes (default auto: a GPU where "
                             "torch sees one; CUDA asked for where there is none: one line, exit 2)")


def add_device_argument(parser: argparse.ArgumentParser) -> None:
    """``--device auto|cpu|cuda|cuda:N``: where the encoder (and a probe that trains by gradient) computes."""
    parser.add_argument("--device", default="cpu",
                        help="auto | cpu | cuda | cuda:N: where the encoder and the Adam-trained probes compute "
                             "(default cpu; CUDA asked for where there is none: one line, exit 2)")


def add_random_init_arguments(parser: argparse.ArgumentParser) -> None:
    """``--random-init all|lstm`` and ``--random-seed``: probe the same architecture with random weights (the
    random-encoder baseline; elmo_bench.encoders.random_init)."""
    parser.add_argument("--random-init", default=None, choices=list(modes()),
                        help="probe a random encoder of the same architecture: all (biLM or transformers) | lstm "
                             "(biLM: trained token layer, random LSTMs)")
    parser.add_argument("--random-seed", type=int, default=0, help="seed of the random encoder's weights (default 0)")


def add_options_weights(parser: argparse.ArgumentParser) -> None:
    """The biLM's ``--options/--weights`` (default: the shipped biLM), as every probe command takes them."""
    parser.add_argument("--options", default=str(DEFAULT_OPTIONS), help="biLM options.json (default: the shipped biLM)")
    parser.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="biLM weights.hdf5 (default: the shipped biLM)")


def add_probe_encoder_arguments(parser: argparse.ArgumentParser) -> None:
    """What every probe command (elmo-bench probe NAME, probe-suite) takes about its encoder: the biLM's
    ``--options/--weights``, the encoder options, ``--device`` and the random twin's ``--random-init/--random-seed``."""
    add_options_weights(parser)
    add_encoder_arguments(parser)
    add_device_argument(parser)
    add_random_init_arguments(parser)


def model_key_readers() -> str:
    """The kinds that read the large-model settings (``model_keys``), as the messages name them."""
    return "|".join(name for name, kind in encoder_kinds().items() if kind.model_keys)


def _model_keys_only(args: argparse.Namespace, kind: EncoderKind) -> dict[str, Any]:
    """``--dtype`` and ``--max-tokens`` (embed) as encoder settings; one ConfigError line for a kind that does not
    read them."""
    given = {key: getattr(args, key, None) for key in ("dtype", "max_tokens")}
    given = {key: value for key, value in given.items() if value is not None}
    if given and not kind.model_keys:
        flag = "--" + next(iter(given)).replace("_", "-")
        raise ConfigError(f"{flag} applies to --encoder {model_key_readers()} only (found --encoder {kind.name})")
    return given


def chosen_kind(args: argparse.Namespace) -> EncoderKind:
    """The kind ``--encoder`` names (the default kind when the command has no such flag)."""
    name = getattr(args, "encoder", None) or default_kind().name
    return encoder_kinds()[str(name)]


def encoder_from_args(args: argparse.Namespace, bilm_name: str | None = None, layers: Any = None) -> Any:
    """The Encoder the command line asks for: the kind's own ``from_args`` (the biLM: ``--options/--weights``), else
    built from ``--model`` and the kind's flags (``cli_settings``). ``layers`` (embed's ``--layers 0,2`` or
    ``every:K``): a kind that reads ``layers`` keeps only those (a transformer stops after the deepest); other kinds
    give every layer (embed picks them out)."""
    kind = chosen_kind(args)
    extra = _model_keys_only(args, kind)
    if kind.from_args is not None:
        return kind.from_args(args, bilm_name)
    if not args.model:
        raise ConfigError(f"--encoder {kind.name} needs --model (a directory, file or class; see --help)")
    spec: dict[str, Any] = {"kind": kind.name, kind.model_key: args.model}
    spec.update(kind.cli_settings(args, layers) if kind.cli_settings is not None else {})
    return build_encoder({**spec, **extra})


def encoder_info(encoder: Any) -> dict[str, Any]:
    """The ``bilm``-style record the probes print and store: hash (the cache id), layers, dim, plus the identity."""
    info = dict(getattr(encoder, "info", None) or {})
    return {**info, "hash": cache_id(encoder), "layers": encoder.num_layers, "dim": encoder.dim,
            "encoder": encoder_record(encoder)}
