"""Prepare the shipped biLM's corpus: Gutenberg novels (minus LitBank fold-0 dev/test novels) → Moses-tokenised
sentences, the last 1% of each novel's sentences held out for perplexity; PTB train/valid/test copied as they are;
and the evaluation text the biLM v2 targets are measured on: LitBank fold 0's dev + test documents' tokens as they
stand in the CoNLL files, one sentence a line (`litbank_fold0_devtest.txt`; never trained on).

Usage: python scripts/prepare_lm_corpus.py [DATA_ROOT [WORK_DIR]]
(defaults: the data root of elmo_bench.base.paths, and ``pretrain.work_dir`` of conf/pretrain/default.yaml, where
``elmo-bench pretrain`` then finds the corpus; the shipped biLMs used ``../shared/data /work/lm_work``)
"""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from elmo_bench.base.paths import DATA_ROOT
from elmo_bench.pretrain.corpus import Tokenizer, expand_paths, litbank_eval_books, open_text_lines, prepare_lines


def write_litbank_eval_text(data: Path, target: Path, fold: int = 0) -> int:
    """LitBank fold ``fold``'s dev + test documents, one CoNLL sentence a line (tokens as annotated); returns tokens."""
    from elmo_bench.data.conll2012_coref import iter_documents

    litbank = data / "coref/litbank"
    tokens = 0
    with open(target, "w", encoding="utf-8") as handle:
        for part in ("dev", "test"):
            for line in (litbank / "litbank_tenfold_splits" / str(fold) / f"{part}.ids").read_text().split():
                for doc in iter_documents(litbank / "conll" / line.replace(".tsv", ".conll")):
                    sentences: dict[int, list[str]] = {}
                    for token, sid in zip(doc["tokens"], doc["sentence_ids"]):
                        sentences.setdefault(sid, []).append(token)
                    for words in sentences.values():
                        handle.write(" ".join(words) + "\n")
                        tokens += len(words)
    return tokens


def main(data_root: str, out_dir: str, heldout_fraction: float = 0.01) -> None:
    data, out = Path(data_root), Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    excluded = set(litbank_eval_books(data / "coref/litbank/litbank_tenfold_splits", 0))
    tokenizer = Tokenizer()
    stats = {"excluded_books": sorted(excluded), "books": 0, "train_sentences": 0, "train_tokens": 0,
             "heldout_sentences": 0, "heldout_tokens": 0}
    with open(out / "novels.train.txt", "w", encoding="utf-8") as train, \
            open(out / "novels.heldout.txt", "w", encoding="utf-8") as held:
        for path in expand_paths(str(data / "lm_corpus/gutenberg_litbank_originals/*.txt.gz")):
            if path.name.split(".txt")[0] in excluded:
                continue
            sentences = list(prepare_lines((line for _, line in open_text_lines(path)), tokenizer))
            cut = len(sentences) - max(1, int(len(sentences) * heldout_fraction))
            for part, handle, key in ((sentences[:cut], train, "train"), (sentences[cut:], held, "heldout")):
                for s in part:
                    handle.write(s + "\n")
                stats[f"{key}_sentences"] += len(part)
                stats[f"{key}_tokens"] += sum(s.count(" ") + 1 for s in part)
            stats["books"] += 1
            print(path.name, len(sentences), flush=True)
    with gzip.open(data / "lm_corpus/ptb_mikolov/ptb.train.txt.gz", "rt") as src, \
            open(out / "ptb.train.txt", "w", encoding="utf-8") as dst:
        for line in src:
            if line.strip():
                dst.write(" ".join(line.split()) + "\n")
    for split in ("valid", "test"):
        with open(data / f"lm_corpus/ptb_mikolov/ptb.{split}.txt", encoding="utf-8") as src, \
                open(out / f"ptb.{split}.txt", "w", encoding="utf-8") as dst:
            for line in src:
                if line.strip():
                    dst.write(" ".join(line.split()) + "\n")
    stats["litbank_fold0_devtest_tokens"] = write_litbank_eval_text(data, out / "litbank_fold0_devtest.txt")
    (out / "prepare_stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    print(json.dumps(stats))


def default_work_dir() -> str:
    """``pretrain.work_dir`` of the default pretraining config, resolved: the corpus goes where ``pretrain`` reads it."""
    from elmo_bench.commands.pretrain import compose_pretrain  # deferred: Hydra composes only when no WORK_DIR is given

    return compose_pretrain([]).work_dir


if __name__ == "__main__":
    args = sys.argv[1:3]
    main(args[0] if args else str(DATA_ROOT), args[1] if len(args) > 1 else default_work_dir())
