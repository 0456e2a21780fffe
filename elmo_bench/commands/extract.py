"""``elmo-bench extract``: an encoder's layers of a sentence file into the activation cache as a sharded entry,
resumable after a kill and split across ranks under torchrun (elmo_bench.encoders.shards).

``torchrun --nproc-per-node=K -m elmo_bench extract ...``: rank r computes shards r, r+K, ...; rank 0 publishes the
entry once every shard is complete; the entry is byte-identical to one process's. Runs (``run.py``) then read the
entry like any other, given the same ``paths.cache_dir``.
"""
from __future__ import annotations

import json
from typing import Sequence

from elmo_bench.base.arguments import ArgumentParser, positive_int
from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
from elmo_bench.encoders.shards import world


def build_parser() -> ArgumentParser:
    """``elmo-bench extract``'s arguments (the docs test parses documented commands with it)."""
    from elmo_bench.encoders.cli_options import add_device_argument, add_encoder_arguments  # lazy: torch

    parser = ArgumentParser(prog="elmo-bench extract",
                            description="an encoder's layers of a sentence file into a sharded activation cache entry")
    parser.add_argument("--options", default=str(DEFAULT_OPTIONS), help="options.json (default: the shipped biLM)")
    parser.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="weights.hdf5 (default: the shipped biLM)")
    add_encoder_arguments(parser)
    add_device_argument(parser)
    parser.add_argument("--input", required=True, help="one whitespace-tokenised sentence a line")
    parser.add_argument("--cache-dir", required=True, help="the activation cache directory (a run's paths.cache_dir)")
    parser.add_argument("--shard-sentences", type=positive_int, default=1024,
                        help="distinct sentences per shard, the unit of work and of resume (default 1024)")
    parser.add_argument("--cache-dtype", default="fp16", choices=["fp16", "fp32"], help="storage (default fp16)")
    parser.add_argument("--threads", type=positive_int, default=1, help="torch threads per process (default 1)")
    return parser


def extract_main(argv: Sequence[str]) -> int:
    """Extract (or resume) the entry; rank 0 prints one JSON line: the key, the shard count, the sentences."""
    args = build_parser().parse_args(argv)
    import torch  # lazy: torch

    from elmo_bench.base.device import resolve_device  # lazy: torch
    from elmo_bench.commands.embed import read_sentences  # lazy: h5py
    from elmo_bench.encoders.cache import ActivationCache  # lazy: torch
    from elmo_bench.encoders.cli_options import encoder_from_args  # lazy: torch
    from elmo_bench.encoders.protocol import moved  # lazy: torch

    torch.set_num_threads(args.threads)
    sentences = read_sentences(args.input)
    rank, size = world()
    device = resolve_device(args.device, "--device")
    if device.type == "cuda" and size > 1:
        device = torch.device("cuda", rank % torch.cuda.device_count())
    encoder = moved(encoder_from_args(args), device)
    cache = ActivationCache(args.cache_dir, encoder, progress=False, dtype=args.cache_dtype,
                            shard_sentences=args.shard_sentences)
    entry = cache.layers(sentences, name="extract")
    if size > 1:
        torch.distributed.destroy_process_group()
    if rank == 0:
        print(json.dumps({"entry": entry.meta["key"], "shards": entry.meta["shards"], "sentences": len(sentences),
                          "ranks": size}))
    return 0
