"""What measuring split leakage costs beside reading the splits, measured in one run.

Reads the SRL task's CoNLL-2005 splits (the largest train split of the shared data) as a run does, then measures
their overlap (elmo_bench.data.split_checks) with the task's example key; without ``../shared/data`` a synthetic
split of the same size (90,750 examples of 25 tokens over 40,000 distinct sentences) stands in. Prints one JSON
line: the seconds of each step and their ratio (overlap / read).

    python bench/split_overlap_speed.py
"""
from __future__ import annotations

import json
import random
import time

from elmo_bench.base.paths import DATA_ROOT
from elmo_bench.data.split_checks import split_overlap
from elmo_bench.engine.experiment import load_task
from elmo_bench.tasks.registry import config_files


def synthetic() -> dict[str, list[dict]]:
    rng = random.Random(0)
    sentences = [[f"w{rng.randrange(20000)}" for _ in range(25)] for _ in range(40000)]
    return {"train": [{"tokens": rng.choice(sentences)} for _ in range(90750)],
            "dev": [{"tokens": rng.choice(sentences)} for _ in range(3248)]}


def main() -> None:
    srl = load_task("srl")
    started = time.perf_counter()
    source = "synthetic (no ../shared/data)"
    try:
        from omegaconf import OmegaConf

        data = OmegaConf.to_container(OmegaConf.load(config_files("data")["conll2005"]), resolve=False)
        data = {k: v.replace("${paths.data_root}", str(DATA_ROOT)) if isinstance(v, str) else v
                for k, v in data.items() if k != "defaults"}
        splits = srl.read(data)
        source = "CoNLL-2005 (../shared/data)"
        key = srl.example_key
    except (OSError, ValueError, KeyError):
        splits, key = synthetic(), load_task("ner").example_key
    read_seconds = time.perf_counter() - started
    started = time.perf_counter()
    shares = split_overlap(splits, key)
    overlap_seconds = time.perf_counter() - started
    print(json.dumps({"data": source, "examples": {k: len(v) for k, v in splits.items()},
                      "read_seconds": round(read_seconds, 2), "overlap_seconds": round(overlap_seconds, 3),
                      "overlap_over_read": round(overlap_seconds / max(read_seconds, 1e-9), 4),
                      "shares": {k: round(100 * v, 2) for k, v in shares.items()}}))


if __name__ == "__main__":
    main()
