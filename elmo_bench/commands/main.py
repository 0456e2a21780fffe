"""The ``elmo-bench`` command: one subcommand per job; each imports its machinery only when called.

Bad input (a DataError, a config error, an out-of-range option) ends every subcommand with one line on stderr and
exit code 2; ``--debug`` anywhere on the command line shows the traceback instead.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.guard import debug_requested, exit_cleanly_on_sigterm, exit_code, guarded
from elmo_bench.commands.pretrain import compose_pretrain
from elmo_bench.probe.command_line import probe_commands
from elmo_bench.probe.registry import declared_function, registered_probes
from elmo_bench.tasks.registry import registered


def build_embed_parser() -> ArgumentParser:
    """``elmo-bench embed``'s arguments (built without running the job: the docs test parses documented commands with it)."""
    from elmo_bench.encoders.cli_options import add_extraction_arguments  # lazy: torch

    parser = ArgumentParser(prog="elmo-bench embed", description="an encoder's layers of a sentence file into hdf5")
    add_extraction_arguments(parser)  # the encoder options, one definition with extract's
    parser.add_argument("--input", required=True, help="one whitespace-tokenised sentence a line")
    parser.add_argument("--output", required=True, help="hdf5 file to write (never the input; an existing file "
                        "only if embed wrote it, or with --overwrite)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output that embed did not write")
    return parser


def _embed(argv: Sequence[str]) -> int:
    args = build_embed_parser().parse_args(argv)
    from elmo_bench.base.device import resolve_device  # lazy: torch
    from elmo_bench.commands.embed import LAYER_CHOICES, check_output, embed_file, layer_choice  # lazy: h5py
    from elmo_bench.encoders.cli_options import EMBED_BATCH_SIZE, encoder_from_args  # lazy: torch
    from elmo_bench.encoders.protocol import moved  # lazy: torch

    check_output(args.input, args.output, args.overwrite)  # before the biLM loads: a refusal costs nothing
    layers = layer_choice(args.layers)
    device = resolve_device(args.device, "--device")
    encoder = moved(encoder_from_args(args, layers=None if isinstance(layers, str) and layers in LAYER_CHOICES
                                      else layers), device)
    count = embed_file(encoder, args.input, args.output, layers=args.layers,
                       batch_size=args.batch_size or EMBED_BATCH_SIZE, overwrite=args.overwrite)
    print(json.dumps({"sentences": count, "output": args.output, "layers": args.layers}))
    return 0


def file_scorers() -> dict[str, Any]:
    """name → scorer (``score_file_count``, ``score_files(*paths)``): every registered task with a file scorer
    (``Task.score_files``, elmo_bench.tasks.registry), and every probe's that declares one (ProbeDeclaration.scorer:
    the WSD probe's). Imported here, as every subcommand's machinery (torch and the task packages), so that other
    commands start fast."""
    from elmo_bench.engine.experiment import load_task  # lazy: torch
    scorers: dict[str, Any] = {}
    for name in registered():
        try:
            scorers[name] = load_task(name)
        except ConfigError as broken:  # one plug-in whose Task does not load: the other tasks still score
            print(f"warning: {broken}; skipped", file=sys.stderr)
    scorers = {name: task for name, task in scorers.items() if task.score_file_count}
    for name, declared in registered_probes().items():
        if declared.scorer is not None:
            scorers[name] = declared_function(declared, declared.scorer)
    return scorers


def build_score_parser(scorers: dict[str, Any] | None = None) -> ArgumentParser:
    """``elmo-bench score``'s arguments: TASK is one of the file scorers (loaded here when not given)."""
    parser = ArgumentParser(prog="elmo-bench score", description="official-semantics scorers on files")
    parser.add_argument("task", choices=sorted(file_scorers() if scorers is None else scorers))
    parser.add_argument("files", nargs="+")
    return parser


def _score(argv: Sequence[str]) -> int:
    scorers = file_scorers()
    args = build_score_parser(scorers).parse_args(argv)
    scorer = scorers[args.task]
    if len(args.files) != scorer.score_file_count:
        raise ConfigError(f"elmo-bench score {args.task}: expected {scorer.score_file_count} file(s), "
                          f"found {len(args.files)}")
    print(json.dumps(scorer.score_files(*args.files)))
    return 0


def _delegate(module: str, function: str) -> Callable[[Sequence[str]], int]:
    def run(argv: Sequence[str]) -> int:
        import importlib

        return int(getattr(importlib.import_module(module), function)(list(argv)) or 0)

    return run


def _parses_with(module: str, builder: str) -> Callable[[Sequence[str]], Any]:
    """``argv`` parsed by ``module.builder()``'s parser (the one the subcommand runs with), nothing run."""
    def parse(argv: Sequence[str]) -> Any:
        import importlib

        return getattr(importlib.import_module(module), builder)().parse_args(list(argv))

    return parse


def _probe_command(name: str) -> Callable[[Sequence[str]], int]:
    """``elmo-bench probe`` or a probe's own command (elmo_bench.commands.probe_command)."""
    def run(argv: Sequence[str]) -> int:
        from elmo_bench.commands.probe_command import command_main  # lazy: omegaconf

        return command_main(name, argv)

    return run


def _probe_parse(name: str) -> Callable[[Sequence[str]], Any]:
    def parse(argv: Sequence[str]) -> Any:
        from elmo_bench.commands.probe_command import parse as parsed  # lazy: omegaconf

        return parsed(name, argv)

    return parse


def _composes(default: str) -> Callable[[Sequence[str]], Any]:
    """Hydra-override subcommands (pretrain, finetune-lm): ``argv`` composed and checked as the run would be."""
    def parse(argv: Sequence[str]) -> Any:
        return compose_pretrain(list(argv), default=default)

    return parse


class Command(NamedTuple):
    """One subcommand: ``run(argv)`` does the job; ``parse(argv)`` only checks a command line (its argparse parser,
    or the Hydra composition of the override commands) and returns what the job would get, so documented commands
    are checked without running them (tests/test_docs.py)."""

    run: Callable[[Sequence[str]], int]
    help: str
    parse: Callable[[Sequence[str]], Any]


class Commands(Mapping[str, Command]):
    """The subcommands: the fixed ones, then each probe's own (``probe-pos``: a probe whose declaration names a
    command, found in the probe registry on first need, so a fixed command starts without scanning the probes; a
    probe cannot take a fixed command's name)."""

    def __init__(self, fixed: dict[str, Command]) -> None:
        self.fixed = fixed
        self._every: dict[str, Command] | None = None

    def every(self) -> dict[str, Command]:
        if self._every is None:
            found = {name: Command(_probe_command(name), declared.command.summary, _probe_parse(name))
                     for name, declared in sorted(probe_commands().items()) if name not in self.fixed}
            self._every = {**self.fixed, **found}
        return self._every

    def __getitem__(self, name: str) -> Command:
        return self.fixed[name] if name in self.fixed else self.every()[name]

    def __contains__(self, name: object) -> bool:
        return name in self.fixed or name in self.every()

    def __iter__(self) -> Iterator[str]:
        return iter(self.every())

    def __len__(self) -> int:
        return len(self.every())


COMMANDS = Commands({
    "embed": Command(_embed, "biLM layers of a sentence file into hdf5", _parses_with(__name__, "build_embed_parser")),
    "extract": Command(_delegate("elmo_bench.commands.extract", "extract_main"),
                       "an encoder's layers into a sharded, resumable cache entry (torchrun: split across ranks)",
                       _parses_with("elmo_bench.commands.extract", "build_parser")),
    "score": Command(_score, "score prediction files with the official scorers' semantics",
                     _parses_with(__name__, "build_score_parser")),
    "evaluate": Command(_delegate("elmo_bench.engine.evaluate", "evaluate_main"),
                        "re-evaluate a run from its best model", _parses_with("elmo_bench.engine.evaluate", "build_parser")),
    "pretrain": Command(_delegate("elmo_bench.commands.pretrain", "pretrain_main"), "pretrain a biLM (Hydra overrides)",
                        _composes("default")),
    "perplexity": Command(_delegate("elmo_bench.commands.pretrain", "perplexity_main"), "held-out perplexity of a biLM",
                          _parses_with("elmo_bench.commands.pretrain", "build_perplexity_parser")),
    "finetune-lm": Command(_delegate("elmo_bench.commands.pretrain", "finetune_main"),
                           "continue LM training on task text", _composes("finetune")),
    "report": Command(_delegate("elmo_bench.commands.report", "report_main"), "paper tables and figures from results",
                      _parses_with("elmo_bench.report.cli", "build_parser")),
    "migrate": Command(_delegate("elmo_bench.commands.migrate", "migrate_main"),
                       "bring a results tree of an older version to today's record files (once)",
                       _parses_with("elmo_bench.commands.migrate", "build_parser")),
    "export-results": Command(_delegate("elmo_bench.commands.export_results", "export_main"),
                              "copy a results tree into the compact committable form the report reads",
                              _parses_with("elmo_bench.report.export", "build_parser")),
    "plan": Command(_delegate("elmo_bench.commands.plan", "plan_main"),
                    "cost of a config's or sweep's runs without training: FLOPs, cache, memory, GPU hours",
                    _parses_with("elmo_bench.commands.plan", "build_parser")),
    "config": Command(_delegate("elmo_bench.commands.show_config", "config_main"),
                      "the resolved RunConfig of a run or sweep (Hydra overrides): every effective value",
                      _parses_with("elmo_bench.commands.show_config", "build_parser")),
    "modes": Command(_delegate("elmo_bench.commands.modes", "modes_main"),
                     "edge probing's every-mode sweep of an encoder: one run.py job per line",
                     _parses_with("elmo_bench.commands.modes", "build_parser")),
    "probe": Command(_probe_command("probe"), "one probe on every layer of one encoder, flags from its settings: "
                     "elmo-bench probe NAME --setting value (run.py probe=NAME)", _probe_parse("probe")),
    "probe-suite": Command(_delegate("elmo_bench.commands.probe_aliases", "probe_suite_main"),
                           "every probe on one encoder, resumable: run.py -m experiment=probe_suite",
                           _parses_with("elmo_bench.commands.probe_aliases", "build_suite_parser")),
})


def unknown_command(name: str | None) -> str:
    """The one line for a missing or mistyped subcommand (``elmo-bench embedd``): the closest name, the list."""
    import difflib

    known = ", ".join(COMMANDS)
    if name is None:
        return f"elmo-bench: expected a command, one of {known} (elmo-bench --help)"
    close = difflib.get_close_matches(name, list(COMMANDS), n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"elmo-bench: unknown command {name!r}: {hint}expected one of {known} (elmo-bench --help)"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = debug_requested(argv)
    if argv and argv[0] in ("-h", "--help"):
        lines = [f"  {name:<12} {command.help}" for name, command in COMMANDS.items()]
        print("usage: elmo-bench COMMAND [ARGS]\n\ncommands:\n" + "\n".join(lines))
        return 0
    if not argv or argv[0] not in COMMANDS:
        print(f"error: {unknown_command(argv[0] if argv else None)}", file=sys.stderr, flush=True)
        return 2
    exit_cleanly_on_sigterm()
    command = COMMANDS[argv[0]].run
    try:
        return guarded(lambda: command(argv[1:]), debug)
    except SystemExit as stop:  # usage errors and --help, user errors (2), SIGTERM: the exit code; a text: one line
        return exit_code(stop)


if __name__ == "__main__":
    sys.exit(main())
