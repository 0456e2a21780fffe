"""How often the SNLI hub path (raw sentences through elmo_bench.tasks.snli.reader.ptb_tokenize) gives exactly the tokens the
file reader takes from the official binary parses, on the official dev and test files.

    python scripts/snli_hub_tokenisation.py [DATA_ROOT]      # default ../shared/data
"""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from elmo_bench.tasks.snli.reader import ptb_tokenize, read_jsonl, tokens_from_binary_parse


def main(root: Path) -> None:
    for split in ("dev", "test"):
        path = root / "snli" / f"snli_1.0_{split}.jsonl.gz"
        records = [json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8") if line.strip()]
        sentences = [(r[k], r[f"{k}_binary_parse"]) for r in records for k in ("sentence1", "sentence2")]
        same_sentences = sum(ptb_tokenize(raw) == tokens_from_binary_parse(parse) for raw, parse in sentences)
        usable, _ = read_jsonl(path)
        raw = {r["pairID"]: r for r in records}
        same_pairs = sum(ptb_tokenize(raw[e["id"]]["sentence1"]) == e["premise"]
                         and ptb_tokenize(raw[e["id"]]["sentence2"]) == e["hypothesis"] for e in usable)
        print(json.dumps({"split": split, "sentences": len(sentences), "identical_sentences": same_sentences,
                          "usable_pairs": len(usable), "identical_pairs": same_pairs,
                          "identical_pairs_pct": round(100 * same_pairs / len(usable), 2)}))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1].parent / "shared" / "data")
