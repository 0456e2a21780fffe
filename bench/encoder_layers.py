"""Issue 46: what ``encoder.layers``, ``encoder.dtype`` and ``encoder.max_tokens`` save, on one model and one set of
sentences. Each setting is extracted in its own process (so peak resident memory is that setting's alone):
``TransformersEncoder(...).layers`` over the sentences in length-sorted batches of 4,096 words (as the cache
batches them), layers kept on the CPU as float32 as the cache receives them. One JSON line per setting: seconds,
words per second, peak RSS (MiB), and the bytes of the layers kept; the last line compares each with ``all``.

The model is a random Llama-style decoder built here from a config (``--hidden``, ``--blocks``; the tokenizer of
tests/hf_tiny.py) or any local directory with ``--model DIR``. Sentences: the bundled NER sample's, repeated.

    python bench/encoder_layers.py [--blocks 6] [--hidden 512] [--repeat 8] [--threads 2]
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's elmo_bench and tests, whatever is installed
#: the settings compared: name -> TransformersEncoder keyword arguments (2 of 7 layers, the deepest in the lower half)
SETTINGS = {"all": {}, "layers_0_2": {"layers": [0, 2]}, "bf16": {"dtype": "bfloat16"},
            "max_tokens_512": {"max_tokens": 512}}


def build_model(directory: Path, blocks: int, hidden: int) -> Path:
    """A random Llama-style model (``blocks`` blocks of width ``hidden``) saved with the tests' tiny tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaModel

    from tests.hf_tiny import _decoder, _sample_lines

    _decoder(directory, _sample_lines(), "llama")  # tokenizer and a tiny model, replaced below
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=400, hidden_size=hidden, num_hidden_layers=blocks, num_attention_heads=8,
                         num_key_value_heads=2, intermediate_size=hidden * 11 // 4, max_position_embeddings=512)
    LlamaModel(config).save_pretrained(directory)
    return directory


def sentences(repeat: int) -> list[list[str]]:
    from elmo_bench.data.conll2003 import read_conll

    base = [e["tokens"] for e in read_conll(REPO / "tasks" / "ner" / "samples" / "sample.train")]
    return [list(s) + [str(i)] for i in range(repeat) for s in base]  # distinct sentences, the sample's lengths


def measure(model: str, setting: str, repeat: int, threads: int) -> dict:
    """One setting's extraction in this process: seconds, words/s, peak RSS, bytes of the kept layers."""
    import torch

    from elmo_bench.encoders.transformers.encoder import TransformersEncoder

    torch.set_num_threads(threads)
    encoder = TransformersEncoder(model, **SETTINGS[setting])
    words = sorted(sentences(repeat), key=len)
    kept = 0
    started = time.perf_counter()
    start = 0
    while start < len(words):
        end, count = start, 0
        while end < len(words) and count + len(words[end]) <= 4096:
            count += len(words[end])
            end += 1
        layers, _ = encoder.layers(words[start:end])
        kept += layers.cpu().numel() * 4
        start = end
    seconds = time.perf_counter() - started
    total = sum(len(s) for s in words)
    return {"setting": setting, "seconds": round(seconds, 3), "words_per_second": round(total / seconds, 1),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "layer_bytes": kept, "layers": encoder.num_layers, "words": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a local model directory (default: a random Llama built here)")
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=8, help="copies of the NER sample's 150 sentences")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: measure one setting
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.model, args.one, args.repeat, args.threads)))
        return
    model = args.model or str(build_model(Path(tempfile.mkdtemp(prefix="encoder_layers_")), args.blocks, args.hidden))
    results = {}
    for setting in SETTINGS:
        done = subprocess.run([sys.executable, __file__, "--model", model, "--one", setting, "--repeat",
                               str(args.repeat), "--threads", str(args.threads)], cwd=REPO, capture_output=True,
                              text=True, check=True)
        results[setting] = json.loads(done.stdout.strip().splitlines()[-1])
        print(json.dumps(results[setting]))
    base = results["all"]
    print(json.dumps({name: {"time_ratio": round(r["seconds"] / base["seconds"], 3),
                             "rss_saved_mib": round(base["peak_rss_mib"] - r["peak_rss_mib"], 1),
                             "layer_bytes_saved_mib": round((base["layer_bytes"] - r["layer_bytes"]) / 2**20, 1)}
                      for name, r in results.items() if name != "all"}))


if __name__ == "__main__":
    main()
