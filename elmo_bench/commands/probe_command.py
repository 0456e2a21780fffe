"""``elmo-bench probe NAME --setting value ...`` and each probe's own command (``probe-pos``, ...), generated.

``elmo-bench probe NAME`` runs probe NAME exactly as ``python run.py probe=NAME probe.<setting>=<value>`` does
(elmo_bench.commands.probe_aliases.run_alias: the same door, identity, resume and records); its flags are made from
the probe's settings dataclass (elmo_bench.probe.command_line: ``--<setting>``, help from the field's comment, the
default from the dataclass only), beside the encoder, cache and output options every probe command takes
(elmo_bench.encoders.cli_options) and the run's ``--seed``/``--max-segment``. It prints the probe's JSON object.

A probe whose declaration names a :class:`~elmo_bench.probe.declaration.ProbeCommand` also has that command
(``elmo-bench probe-pos``): the same parser under the spellings, run-level flags and defaults that command has
always taken. Nothing here names a probe: the commands are found in the probe registry.
"""
from __future__ import annotations

import argparse
import json
import logging
from typing import Any, Sequence

from elmo_bench.base.arguments import ArgumentParser, positive_int
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import CACHE_DIR
from elmo_bench.commands.probe_aliases import FLAGS, encoder_overrides, run_alias
from elmo_bench.engine.run_config import Runtime
from elmo_bench.probe.command_line import (
    add_setting_flags,
    field_comments,
    flag_names,
    probe_commands,
    setting_flags,
    setting_overrides,
)
from elmo_bench.probe.declaration import ProbeCommand, ProbeDeclaration
from elmo_bench.probe.registry import probe_declaration, registered_probes

#: ``elmo-bench probe NAME``: every setting under its own name, both run-level flags, --out optional
GENERIC = ProbeCommand("probe", "one probe on every layer of one encoder: run.py probe=NAME probe.<setting>=...",
                       run={"seed": None, "max_segment": None})
#: the run-level keys a probe command may take as flags: key → (flag, type, help)
RUN_FLAGS = {"seed": ("--seed", int, "the run's seed: shuffling order and probe initialisation"),
             "max_segment": ("--max-segment", positive_int, field_comments(Runtime)["max_segment"])}


def build_parser(declared: ProbeDeclaration, command: ProbeCommand, prog: str) -> ArgumentParser:
    """The flags of ``command`` (GENERIC or the probe's own) for probe ``declared``."""
    from elmo_bench.encoders.cli_options import (  # lazy: torch
        add_device_argument,
        add_encoder_arguments,
        add_options_weights,
        add_random_init_arguments,
    )

    parser = ArgumentParser(prog=prog, description=f"{command.summary} (probe {declared.name}: {declared.predicts}; "
                                                   f"prints its JSON object)")
    add_options_weights(parser)
    add_encoder_arguments(parser)
    add_device_argument(parser)
    if command.random_init:
        add_random_init_arguments(parser)
    add_run_flags(parser, command)
    try:
        add_setting_flags(parser, setting_flags(declared.settings, command.flags))
    except argparse.ArgumentError as clash:  # a setting spelled as an option every probe command has
        raise ConfigError(f"probe {declared.name}: the flag {clash.argument_name} of one of its settings is an "
                          f"option every probe command takes; spell it otherwise (ProbeCommand.flags)") from None
    return parser


def add_run_flags(parser: argparse.ArgumentParser, command: ProbeCommand) -> None:
    """The run-level keys ``command`` takes (``--seed``, ``--max-segment``), the run directory and the run-time
    options every probe command takes (the activation cache, the threads, the progress bars)."""
    defaults = Runtime()
    for key, default in command.run.items():
        flag, kind, text = RUN_FLAGS[key]
        shown = default if default is not None else getattr(defaults, key)
        parser.add_argument(flag, type=kind, dest=f"run_{key}", metavar=key.upper(), help=f"{key}: {text} (default "
                            f"{shown})", default=argparse.SUPPRESS if default is None else default)
    add_run_options(parser, command.out_required)


def add_run_options(parser: argparse.ArgumentParser, out_required: bool) -> None:
    """The activation cache, the threads, the progress bars and the run directory (every probe command's)."""
    parser.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    parser.add_argument("--threads", type=positive_int, default=1, help="torch intra-op threads")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--out", required=out_required, default=None,
                        help="the run directory (results.json; resumed, or skipped when finished)" +
                        ("" if out_required else "; default: none, the object is printed and nothing is kept"))


def overrides(declared: ProbeDeclaration, command: ProbeCommand, args: argparse.Namespace) -> list[str]:
    """``probe=NAME``, the given settings, the run-level flags, the encoder and run-time options as overrides."""
    run = [f"{key}={getattr(args, f'run_{key}')}" for key in command.run if hasattr(args, f"run_{key}")]
    return [f"probe={declared.name}", *setting_overrides(setting_flags(declared.settings, command.flags), args),
            *run, *encoder_overrides(args)]


def spelled(declared: ProbeDeclaration, command: ProbeCommand) -> dict[str, str]:
    """Config key → the flag of ``command`` that sets it (a refusal names what the user typed)."""
    return {**FLAGS, **flag_names(setting_flags(declared.settings, command.flags)),
            **{key: RUN_FLAGS[key][0] for key in command.run}}


def _chosen(argv: Sequence[str]) -> tuple[ProbeDeclaration, ProbeCommand, str, list[str]]:
    """``elmo-bench probe NAME ARGS``: the probe, GENERIC, its prog, ARGS; a usage line for a missing or unknown
    NAME (``--help`` without NAME lists the probes)."""
    probes = registered_probes()
    if argv and argv[0] in probes:
        return probes[argv[0]], GENERIC, f"elmo-bench probe {argv[0]}", list(argv[1:])
    parser = ArgumentParser(prog="elmo-bench probe", description=GENERIC.summary + "; elmo-bench probe NAME --help: "
                                                                "its flags")
    parser.add_argument("name", metavar="NAME", choices=sorted(probes), help="the probe: " + ", ".join(sorted(probes)))
    parser.parse_args(list(argv[:1]))
    raise AssertionError("unreachable: a known NAME is handled above")


def command_parser(name: str, argv: Sequence[str] = ()) -> ArgumentParser:
    """The parser of ``elmo-bench NAME`` (a probe's own command), or of ``elmo-bench probe ARGV[0]``."""
    if name == GENERIC.name:
        declared, command, prog, _ = _chosen(argv)
        return build_parser(declared, command, prog)
    declared = probe_commands()[name]
    return build_parser(declared, declared.command, f"elmo-bench {name}")


def command_overrides(name: str, args: argparse.Namespace, probe: str | None = None) -> list[str]:
    """The overrides ``elmo-bench NAME`` (``probe`` for GENERIC) runs with, from its parsed ``args``."""
    declared = probe_declaration(probe) if name == GENERIC.name else probe_commands()[name]
    return overrides(declared, GENERIC if name == GENERIC.name else declared.command, args)


def parse(name: str, argv: Sequence[str]) -> Any:
    """``elmo-bench NAME ARGV`` parsed, nothing run (the docs test checks documented commands with it)."""
    if name == GENERIC.name:
        declared, command, prog, rest = _chosen(argv)
        return build_parser(declared, command, prog).parse_args(rest)
    return command_parser(name).parse_args(list(argv))


def command_main(name: str, argv: Sequence[str]) -> int:
    """``elmo-bench NAME ARGV``: parse, run the probe as run.py would, print its JSON object."""
    if name == GENERIC.name:
        declared, command, prog, argv = _chosen(argv)
    else:
        declared = probe_commands()[name]
        command, prog = declared.command, f"elmo-bench {name}"
    args = build_parser(declared, command, prog).parse_args(list(argv))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    results = run_alias(overrides(declared, command, args), args.out, spelled(declared, command))
    print(json.dumps(results.get("printed")))
    return 0
