"""encoder=transformers layer extraction against a plain Hugging Face loop over the same sentences, in one run.

Ours: ``ActivationCache(dir, TransformersEncoder(model)).layers(sentences)``: deduplication, length-sorted batches,
word alignment, overlapping windows for sentences longer than the window, pooling, and the fp16 cache writes.
Reference: ``model(**batch, output_hidden_states=True)`` over batches of ``--batch-size`` sentences in file order,
padded and truncated by the tokenizer (no pooling, no windows, nothing stored): the least work a script that
wants every hidden state does. Each side runs ``--repeat`` times, alternated (a shared machine's speed drifts by
several percent between runs); words per second are the medians, and the ratio theirs, one JSON line (with each
repeat's own ratio).

The model is a randomly initialised BERT built here (WordPiece tokenizer trained on the sentences; ``--hidden``,
``--layers``), or any local directory with ``--model DIR``. Sentences: the bundled NER sample's, and random
sentences of its words with lengths drawn from 5 to ``--max-words`` (some longer than ``--window`` subwords).

    python bench/encoder_speed.py [--sentences 2000] [--threads 2] [--model DIR] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]


def sample_words() -> list[list[str]]:
    """The bundled NER training sample's sentences, read by the NER reader."""
    from elmo_bench.data.conll2003 import read_conll

    return [example["tokens"] for example in read_conll(REPO / "tasks" / "ner" / "samples" / "sample.train")]


def make_sentences(count: int, max_words: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    base = sample_words()
    vocabulary = sorted({w for s in base for w in s})
    extra = [[rng.choice(vocabulary) for _ in range(rng.randint(5, max_words))] for _ in range(count - len(base))]
    return base + extra


def build_bert(directory: Path, sentences: list[list[str]], hidden: int, layers: int, window: int) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator([" ".join(s) for s in sentences],
                            trainers.WordPieceTrainer(vocab_size=2000, special_tokens=["[PAD]", "[UNK]", "[CLS]",
                                                                                       "[SEP]", "[MASK]"]))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                            sep_token="[SEP]", mask_token="[MASK]", model_max_length=window).save_pretrained(directory)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=max(1, hidden // 64), intermediate_size=4 * hidden,
                        max_position_embeddings=window)
    BertModel(config).save_pretrained(directory)


def plain_loop(model_dir: Path, sentences: list[list[str]], batch_size: int, window: int, device: str) -> float:
    """Seconds for the reference loop: tokenizer + model(**batch, output_hidden_states=True), file order."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval().to(device)
    started = time.perf_counter()
    with torch.no_grad():
        for start in range(0, len(sentences), batch_size):
            batch = tokenizer(sentences[start: start + batch_size], is_split_into_words=True, padding=True,
                              truncation=True, max_length=window, return_tensors="pt").to(device)
            states = model(**batch, output_hidden_states=True).hidden_states
            torch.stack(states, dim=1).cpu()
    return time.perf_counter() - started


def ours(model_dir: Path, sentences: list[list[str]], batch_size: int, device: str) -> tuple[float, int]:
    """Seconds for encoder=transformers through the activation cache (a fresh cache directory), and windows."""
    from elmo_bench.encoders.cache import ActivationCache
    from elmo_bench.encoders.transformers.encoder import TransformersEncoder

    encoder = TransformersEncoder(str(model_dir), batch_size=batch_size).to(device)
    windows = len(encoder.plan(sentences)[0])
    with tempfile.TemporaryDirectory() as cache_dir:
        started = time.perf_counter()
        ActivationCache(cache_dir, encoder, progress=False).layers(sentences, name="bench")
        return time.perf_counter() - started, windows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--max-words", type=int, default=100)
    parser.add_argument("--window", type=int, default=128, help="model window of the built BERT (subwords)")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--model", default=None, help="a local model directory instead of the built BERT")
    parser.add_argument("--repeat", type=int, default=3, help="alternated runs of each side; medians compared")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sentences = make_sentences(args.sentences, args.max_words, seed=0)
    words = sum(len(s) for s in sentences)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(args.model) if args.model else Path(tmp) / "bert"
        if not args.model:
            build_bert(model_dir, sentences, args.hidden, args.layers, args.window)
        plain_loop(model_dir, sentences[:64], args.batch_size, args.window, args.device)  # warm-up
        references, encoder_runs = [], []
        for _ in range(args.repeat):   # alternated, so that a machine slowing down between them weighs on both
            references.append(plain_loop(model_dir, sentences, args.batch_size, args.window, args.device))
            encoder_runs.append(ours(model_dir, sentences, args.batch_size, args.device))
    reference = statistics.median(references)
    encoder_seconds, windows = statistics.median(s for s, _ in encoder_runs), encoder_runs[0][1]
    print(json.dumps({"sentences": len(sentences), "words": words, "windows": windows,
                      "model": args.model or f"bert hidden {args.hidden} x {args.layers} layers, window {args.window}",
                      "device": args.device, "threads": args.threads, "repeat": args.repeat,
                      "ratios": [round(r / s, 3) for r, (s, _) in zip(references, encoder_runs)],
                      "encoder_words_per_s": round(words / encoder_seconds, 1),
                      "plain_loop_words_per_s": round(words / reference, 1),
                      "ratio": round(reference / encoder_seconds, 3)}))


if __name__ == "__main__":
    main()
