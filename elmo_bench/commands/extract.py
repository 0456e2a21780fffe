"""``elmo-bench extract``: an encoder's layers of a sentence file into the activation cache as a sharded entry,
resumable after a kill and split across ranks under torchrun (elmo_bench.encoders.shards).

``torchrun --nproc-per-node=K -m elmo_bench extract ...``: rank r computes shards r, r+K, ...; rank 0 publishes the
entry once every shard is complete; the entry is byte-identical to one process's. Runs (``run.py``) then read the
entry like any other, given the same ``paths.cache_dir``.
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any, Sequence

from elmo_bench.base.arguments import ArgumentParser, positive_int
from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.shards import world


def build_parser() -> ArgumentParser:
    """``elmo-bench extract``'s arguments (the docs test parses documented commands with it): ``embed``'s encoder
    options from their one definition (elmo_bench.encoders.cli_options), then the cache's own."""
    from elmo_bench.encoders.cli_options import add_extraction_arguments  # lazy: torch

    parser = ArgumentParser(prog="elmo-bench extract",
                            description="an encoder's layers of a sentence file into a sharded activation cache entry")
    add_extraction_arguments(parser)  # --layers, --dtype, --max-tokens, --batch-size, --device: embed's, one place
    parser.add_argument("--input", required=True, help="one whitespace-tokenised sentence a line")
    parser.add_argument("--cache-dir", required=True, help="the activation cache directory (a run's paths.cache_dir)")
    parser.add_argument("--shard-sentences", type=positive_int, default=1024,
                        help="distinct sentences per shard, the unit of work and of resume (default 1024)")
    parser.add_argument("--cache-dtype", default="fp16", choices=["fp16", "fp32"], help="storage (default fp16)")
    parser.add_argument("--threads", type=positive_int, default=1, help="torch threads per process (default 1)")
    return parser


def cached_layers(args: Any) -> Any:
    """``--layers`` as the encoder keeps them in the cache: None (every layer) or the transformer's subset (indices
    or ``every:K``, made at the encoder: a run with the same ``encoder.layers`` reads the entry). ``top`` and
    ``average`` are no layers of a cache entry, and another kind has no subset a run could read: one line each."""
    from elmo_bench.commands.embed import layer_choice  # lazy: h5py

    layers = layer_choice(args.layers)
    if layers == "all":
        return None
    if layers in ("top", "average"):
        raise ConfigError(f"extract --layers {layers}: a cache entry holds layers, not their {layers}; expected "
                          f"all, every:K or comma-separated layer indices such as 0,2")
    from elmo_bench.encoders.cli_options import chosen_kind, model_key_readers  # lazy: torch

    if not chosen_kind(args).model_keys:
        raise ConfigError(f"extract --layers {args.layers} applies to --encoder {model_key_readers()} only (found --encoder "
                          f"{args.encoder}: its cache entries hold every layer; embed picks layers of any encoder)")
    return layers


def extract_main(argv: Sequence[str]) -> int:
    """Extract (or resume) the entry; rank 0 says on stderr whether it computed it or found it done, and prints one
    JSON line: the key, the shard count, the sentences, the ranks and that ``status``."""
    args = build_parser().parse_args(argv)
    import torch  # lazy: torch

    from elmo_bench.base.device import resolve_device  # lazy: torch
    from elmo_bench.commands.embed import read_sentences  # lazy: h5py
    from elmo_bench.encoders.cache import ActivationCache  # lazy: torch
    from elmo_bench.encoders.cli_options import encoder_from_args  # lazy: torch
    from elmo_bench.encoders.protocol import moved  # lazy: torch

    torch.set_num_threads(args.threads)
    layers = cached_layers(args)  # before the model loads: a refusal costs nothing
    sentences = read_sentences(args.input)
    rank, size = world()
    device = resolve_device(args.device, "--device")
    if device.type == "cuda" and size > 1:
        device = torch.device("cuda", rank % torch.cuda.device_count())
    encoder = moved(encoder_from_args(args, layers=layers), device)
    cache = ActivationCache(args.cache_dir, encoder, progress=False, dtype=args.cache_dtype,
                            shard_sentences=args.shard_sentences, batch_sentences=args.batch_size)
    started = time.perf_counter()
    entry = cache.layers(sentences, name="extract")
    if size > 1:
        torch.distributed.destroy_process_group()
    if rank == 0:
        status = "found" if cache.found else "computed"
        done = "found done: nothing computed" if cache.found else f"computed in {time.perf_counter() - started:.1f} s"
        print(f"extract: entry {entry.meta['key']} {done} ({entry.meta['shards']} shards, {len(sentences)} sentences, "
              f"{size} rank{'s' if size > 1 else ''})", file=sys.stderr, flush=True)
        print(json.dumps({"entry": entry.meta["key"], "shards": entry.meta["shards"], "sentences": len(sentences),
                          "ranks": size, "status": status}))
    return 0
