"""The size of a biLM's softmax, read without loading it, for ``elmo-bench plan``'s pricing of the probes that score
words with it (amnesic_lm, lens): the lines of ``vocab.txt`` beside the weights (as elmo_bench.bilm.lm_head reads
it), else the options' ``n_tokens_vocab``."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def softmax_rows(weights: str | Path | None, options: Any) -> int | None:
    """The softmax's rows, or None when neither ``vocab.txt`` nor ``n_tokens_vocab`` says (the caller's line)."""
    vocab = Path(str(weights)).parent / "vocab.txt" if weights else None
    if vocab is not None and vocab.is_file():
        return sum(1 for line in vocab.read_text(encoding="utf-8").splitlines() if line.strip())
    if "n_tokens_vocab" in options.extra:
        return int(options.extra["n_tokens_vocab"])
    return None
