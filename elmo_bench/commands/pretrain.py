"""Entry points of ``elmo-bench pretrain``, ``elmo-bench perplexity`` and ``elmo-bench finetune-lm``.

``pretrain`` and ``finetune-lm`` take Hydra overrides (``pretrain=tiny pretrain.max_tokens=20000``); the configs
live in the repository's ``conf/pretrain/``. ``perplexity`` takes plain flags and prints one JSON object.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.paths import CONF_DIR, REPO
from elmo_bench.bilm.default import SHIPPED_DIR as SHIPPED
from elmo_bench.engine.config_check import check_added_keys
from elmo_bench.pretrain.pretrain_config import PretrainConfig


def compose_pretrain(overrides: Sequence[str], default: str = "default") -> PretrainConfig:
    """The ``pretrain`` config group composed with Hydra (``pretrain=NAME`` picks the file; its defaults list puts
    the typed ``pretrain/schema`` first, so a wrong type fails here, one line), built once into a PretrainConfig
    (ranges checked). Relative paths (the keys PretrainConfig marks ``path``) resolve against the repository root."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from elmo_bench.engine.config_schema import register_pretrain_schema  # lazy: omegaconf

    register_pretrain_schema()
    overrides = list(overrides)
    chosen = [o for o in overrides if o.startswith("pretrain=") or o.startswith("+pretrain=")]
    rest = [o for o in overrides if o not in chosen]
    name = chosen[-1].split("=", 1)[1] if chosen else default
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = compose(overrides=[f"+pretrain={name}", *rest])
    check_added_keys(rest, OmegaConf.to_container(cfg), CONF_DIR)  # +pretrain.typo=... is an error, not ignored
    out = OmegaConf.to_container(cfg.pretrain, resolve=True)
    paths = [spec.name for spec in dataclasses.fields(PretrainConfig) if spec.metadata.get("path")]
    for key in paths:
        if isinstance(out[key], list):
            out[key] = [_resolve(p) for p in out[key]]
        elif out[key]:
            out[key] = _resolve(out[key])
    return PretrainConfig.of(out)


def _resolve(path: str) -> str:
    p = Path(path)
    return str(p if p.is_absolute() else REPO / p)


def hydra_help(command: str, default: str, what: str) -> str:
    """``--help`` of the Hydra-override commands: usage, the presets of conf/pretrain/ and the default config."""
    from omegaconf import OmegaConf

    presets = sorted(p.stem for p in (CONF_DIR / "pretrain").glob("*.yaml"))
    composed = compose_pretrain([], default=default)
    return (f"usage: elmo-bench {command} [pretrain=PRESET] [pretrain.KEY=VALUE ...]\n\n{what}\n\n"
            f"Hydra overrides of the conf/pretrain group (presets: {', '.join(presets)}; default: {default}).\n"
            f"Relative paths resolve against {REPO}. The default config, resolved:\n\n"
            + OmegaConf.to_yaml(OmegaConf.create({"pretrain": composed.mapping()})))


def _wants_help(argv: Sequence[str] | None) -> bool:
    return any(a in ("-h", "--help") for a in (argv or []))


def _hydra_command(argv: Sequence[str] | None, command: str, default: str, what: str,
                   run: Callable[[Sequence[str] | None], Any]) -> int:
    """A Hydra-override subcommand: ``-h``/``--help`` prints :func:`hydra_help`, anything else runs ``run(argv)``."""
    if _wants_help(argv):
        print(hydra_help(command, default, what))
        return 0
    run(argv)
    return 0


def pretrain_main(argv: Sequence[str] | None = None) -> int:
    """``elmo-bench pretrain [hydra overrides]``: train to the budget, checkpoint, export; prints a JSON summary."""
    return _hydra_command(argv, "pretrain", "default", "Pretrain a biLM (bilm-tf's recipe), checkpointing as it goes; "
                          "exports options.json, weights.hdf5, vocab.txt, weights.sha256.", run_pretrain)


def perplexity_main(argv: Sequence[str] | None = None) -> int:
    """``elmo-bench perplexity --options F --weights F --vocab F --input FILE...``: prints one JSON object."""
    run_perplexity(argv)
    return 0


def finetune_main(argv: Sequence[str] | None = None) -> int:
    """``elmo-bench finetune-lm [hydra overrides]``: prints a JSON summary."""
    return _hydra_command(argv, "finetune-lm", "finetune", "Continue LM training of an exported biLM on task text "
                          "(pretrain.train_files=[...] pretrain.init_dir=DIR), then export. The architecture and "
                          "vocabulary are init_dir's: pretrain.model and pretrain.vocab_file are not read.", run_finetune)


def run_pretrain(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """What ``pretrain_main`` does, returning the summary."""
    from elmo_bench.pretrain.train import train  # lazy: h5py, torch

    cfg = compose_pretrain(list(argv or []))
    summary = train(cfg)
    if os.environ.get("RANK", "0") == "0":
        print(json.dumps(summary))
    return summary


def build_perplexity_parser() -> ArgumentParser:
    """``elmo-bench perplexity``'s arguments (the shipped biLM by default)."""
    parser = ArgumentParser(prog="elmo-bench perplexity",
                            description="Held-out perplexity of an exported biLM (full softmax).")
    parser.add_argument("--options", default=str(SHIPPED / "options.json"))
    parser.add_argument("--weights", default=str(SHIPPED / "weights.hdf5"))
    parser.add_argument("--vocab", default=str(SHIPPED / "vocab.txt"))
    parser.add_argument("--input", nargs="+", required=True,
                        help="held-out text: one whitespace-tokenised sentence a line (globs, .gz)")
    parser.add_argument("--max-sentences", type=int, default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N (default auto)")
    return parser


def run_perplexity(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """What ``perplexity_main`` does, returning the result (keys forward, backward, average, unigram, tokens)."""
    import torch

    from elmo_bench.base.device import resolve_device  # lazy: torch
    from elmo_bench.pretrain.perplexity import evaluate, load_lm  # lazy: h5py, torch
    from elmo_bench.pretrain.train import heldout_sentences  # lazy: h5py, torch

    args = build_perplexity_parser().parse_args(list(argv) if argv is not None else None)

    device = resolve_device(args.device, "--device")
    torch.set_num_threads(args.threads)
    bilm, weight, bias, vocab, counts = load_lm(args.options, args.weights, args.vocab)
    bilm, weight, bias = bilm.to(device), weight.to(device), bias.to(device)
    result = evaluate(bilm, weight, bias, vocab, counts, heldout_sentences(args.input, args.max_sentences))
    print(json.dumps(result))
    return result


def run_finetune(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """``elmo-bench finetune-lm [hydra overrides]``: continue LM training of an exported biLM on new text
    (``pretrain=finetune pretrain.train_files=[...] pretrain.init_dir=DIR``), then export again."""
    from elmo_bench.pretrain.finetune import finetune  # lazy: h5py, torch

    argv = list(argv or [])
    cfg = compose_pretrain(argv, default="finetune")
    summary = finetune(cfg)
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":  # `torchrun --nproc_per_node=2 -m elmo_bench.commands.pretrain pretrain=tiny ...`
    import sys

    pretrain_main(sys.argv[1:])
