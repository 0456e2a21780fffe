"""scripts/gpu_check.sh's large-model step (issue 46): a Llama-style decoder of about 1B parameters built from a config
with random weights (nothing downloaded; a byte-level BPE tokenizer trained here on UD EWT's training text), saved
with ``save_pretrained``, then the POS probe run on it through the project's own path (``python run.py probe=pos``'s
engine, in-process: ``encoder.layers=every:4 encoder.dtype=bfloat16 encoder.max_tokens=N``), timing the extraction
(subword tokens/s, words/s), then one streamed probe (``probe=ridge probe.stream=true`` over the same cached layers),
and the peak memory (``torch.cuda.max_memory_allocated`` on a GPU; the peak resident
memory of the process anywhere).

    python scripts/gpu_check_large.py --device cuda --size 1b --out OUT/large.json      # ~1.1B parameters, 24 blocks
    python scripts/gpu_check_large.py --device cpu --size tiny --out OUT/large.json     # the same path, in seconds

Sizes: ``1b`` (width 2048, 24 blocks, 32 heads of which 8 key/value, MLP 5632, vocabulary 8,000: TinyLlama's shape
with 24 blocks) over UD EWT (dev and test whole, the first 2,000 training sentences, passes of at most 16,384
tokens); ``tiny`` (width 64, 8 blocks) over the first 120/40/40 sentences of each split. Speed does not depend on
the weights' values, so random weights time what a trained model of the shape would.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from elmo_bench.base.atomic import atomic_write_text  # noqa: E402
from elmo_bench.base.paths import DATA_ROOT  # noqa: E402

EWT = DATA_ROOT / "pos" / "ud_english_ewt"
#: the model's shape, the vocabulary, the data cut and the pass size of each size
SIZES: dict[str, dict[str, Any]] = {
    "1b": {"model": dict(hidden_size=2048, num_hidden_layers=24, num_attention_heads=32, num_key_value_heads=8,
                         intermediate_size=5632), "vocab": 8000, "train": 2000, "dev_test": None,
           "max_tokens": 16384},
    "tiny": {"model": dict(hidden_size=64, num_hidden_layers=8, num_attention_heads=4, num_key_value_heads=2,
                           intermediate_size=128), "vocab": 1000, "train": 120, "dev_test": 40, "max_tokens": 2048},
}
WINDOW = 512
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]


def conllu_blocks(path: Path) -> list[str]:
    """The sentences of a CoNLL-U file (``.conllu`` or ``.conllu.gz``) as their text blocks."""
    text = gzip.open(path, "rt", encoding="utf-8").read() if path.suffix == ".gz" else path.read_text("utf-8")
    return [b for b in text.split("\n\n") if b.strip()]


def split_file(data: Path, split: str) -> Path:
    plain = data / f"en_ewt-ud-{split}.conllu"
    return plain if plain.exists() else plain.with_suffix(".conllu.gz")


def cut_ewt(data: Path, out: Path, counts: dict[str, int]) -> Path:
    """A copy of UD EWT with the first ``counts[split]`` sentences of each split (the tiny size's data)."""
    out.mkdir(parents=True, exist_ok=True)
    for split, count in counts.items():
        blocks = conllu_blocks(split_file(data, split))[:count]
        (out / f"en_ewt-ud-{split}.conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return out


def words_of(block: str) -> list[str]:
    """The words of one CoNLL-U sentence (multi-word token ranges and empty nodes left out)."""
    rows = [line.split("\t") for line in block.splitlines() if line and not line.startswith("#")]
    return [r[1] for r in rows if len(r) > 1 and r[0].isdigit()]


def build_model(directory: Path, size: str, lines: list[str], device: torch.device) -> dict[str, Any]:
    """A byte-level BPE tokenizer trained on ``lines`` and a random Llama-style model of ``size`` (built on
    ``device`` in bfloat16), both saved into ``directory`` as a downloaded model would be."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaModel, PreTrainedTokenizerFast

    shape = SIZES[size]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=shape["vocab"], special_tokens=SPECIALS,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<unk>", model_max_length=WINDOW)
    fast.save_pretrained(directory)
    config = LlamaConfig(vocab_size=tok.get_vocab_size(), max_position_embeddings=WINDOW,
                         bos_token_id=tok.token_to_id("<s>"), eos_token_id=tok.token_to_id("</s>"),
                         pad_token_id=tok.token_to_id("<pad>"), **shape["model"])
    torch.manual_seed(0)
    with torch.device(device):
        model = LlamaModel(config).to(torch.bfloat16)
    model.save_pretrained(directory)
    params = sum(p.numel() for p in model.parameters())
    del model
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return {"params": params, "blocks": config.num_hidden_layers, "hidden": config.hidden_size,
            "vocab": tok.get_vocab_size()}


def subword_tokens(directory: Path, sentences: list[list[str]]) -> int:
    """Subword tokens of ``sentences`` under the model's tokenizer (special tokens included)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    return sum(len(ids) for ids in tokenizer(sentences, is_split_into_words=True)["input_ids"])


def probe_run(directory: Path, data: Path, work: Path, size: str, device: str, probe: str = "pos") -> dict[str, Any]:
    """A probe on the model through run.py's engine (job_run: the door's ProbeRunConfig; run_probe), every 4th
    layer in bfloat16, passes of at most the size's ``max_tokens``; its results.json. ``pos``: the L-BFGS POS probe
    (it fills the activation cache); ``ridge``: the ridge probe from streamed statistics (``probe.stream=true``:
    XᵀX and XᵀY accumulated batch by batch over the cached layers, no layer's (tokens, dim) matrix built)."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import run_probe

    shape = SIZES[size]
    own = (["probe.glove=false", "probe.l2_grid=[0.001]", "probe.max_iter=300"] if probe == "pos"
           else ["probe.stream=true", "probe.ridge_grid=[0.001,0.1]"])
    overrides = [f"probe={probe}", "encoder=transformers", f"encoder.path={directory}", "encoder.layers=every:4",
                 "encoder.dtype=bfloat16", f"encoder.max_tokens={shape['max_tokens']}", f"device={device}",
                 f"threads={os.cpu_count() or 1}", f"paths.cache_dir={work / 'cache'}", "logger=disabled",
                 "progress=false", f"probe.data_dir={data}", f"probe.max_train_sentences={shape['train']}", *own]
    return run_probe(job_run(overrides), work / f"probe_{probe}")


def large_check(device: torch.device, size: str, data: Path = EWT) -> dict[str, Any]:
    """Build, extract and probe (see the module docstring); the numbers as one dict."""
    from elmo_bench.probe.lib.ud_data import read_tagged

    started = time.perf_counter()
    shape = SIZES[size]
    with tempfile.TemporaryDirectory(prefix="gpu_check_large_") as tmp:
        work = Path(tmp)
        if shape["dev_test"] is not None:
            data = cut_ewt(data, work / "ewt", {"train": shape["train"], "dev": shape["dev_test"],
                                                "test": shape["dev_test"]})
        text = [" ".join(words_of(b)) for b in conllu_blocks(split_file(data, "train"))]
        model_dir = work / f"llama_{size}"
        built = build_model(model_dir, size, text, device)
        build_seconds = time.perf_counter() - started
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        record = probe_run(model_dir, data, work, size, str(device))
        streamed = probe_run(model_dir, data, work, size, str(device), probe="ridge")
        splits = read_tagged(data, "xpos", shape["train"], None).splits
        sentences = [ex["tokens"] for s in ("train", "dev", "test") for ex in splits[s]]
        tokens = subword_tokens(model_dir, sentences)
    seconds = float(record["timings"]["bilm_seconds"])
    words = sum(len(s) for s in sentences)
    printed = record["printed"]
    return {"size": size, "device": str(device),
            "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None, **built,
            "encoder": {k: record["encoder"].get(k) for k in ("model", "hash", "dtype", "encoder_layer_indices",
                                                              "pooling", "causal", "precision")},
            "sentences": len(sentences), "words": words, "subword_tokens": tokens, "extract_seconds": seconds,
            "tokens_per_second": tokens / seconds if seconds else None,
            "words_per_second": words / seconds if seconds else None,
            "peak_gpu_memory_bytes": torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None,
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "max_tokens": shape["max_tokens"], "build_seconds": build_seconds,
            "probe_seconds": float(record["timings"]["total_seconds"]),
            "probe_test_accuracy": printed["test"],
            "streamed_probe": {"probe": "ridge", "stream": streamed["printed"].get("stream"),
                               "largest_batch": streamed["printed"].get("largest_batch"),
                               "seconds": float(streamed["timings"]["total_seconds"]),
                               "test_accuracy": streamed["printed"]["test"]},
            "total_seconds": time.perf_counter() - started,
            "note": "random weights: accuracies say only that the probe ran; extraction = the activation cache's "
                    "time in the encoder (train cut, dev, test); tokens counted by the model's tokenizer"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu_check_large.py", description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", choices=sorted(SIZES), default="1b")
    parser.add_argument("--data", type=Path, default=EWT, help="the UD EWT directory (default ../shared/data/pos/...)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    from elmo_bench.base.device import resolve_device

    if not split_file(args.data, "train").exists():
        raise SystemExit(f"error: gpu_check_large: no UD EWT training file in {args.data} (give --data DIR)")
    result = large_check(resolve_device(args.device), args.size, args.data)
    atomic_write_text(Path(args.out), json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
