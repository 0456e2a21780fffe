"""Token accuracy (percent), the POS probe's metric; ``score_files`` for tag files written by any tagger."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import read_text


def token_accuracy(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> dict[str, float]:
    """{"accuracy": percent of tokens whose predicted tag equals the gold tag}; sentences must align one to one."""
    if len(gold) != len(predicted):
        raise ValueError(f"token_accuracy: {len(gold)} gold sentences but {len(predicted)} predicted")
    correct = total = 0
    for i, (g, p) in enumerate(zip(gold, predicted)):
        if len(g) != len(p):
            raise ValueError(f"token_accuracy: sentence {i} has {len(g)} gold tags but {len(p)} predicted")
        correct += sum(a == b for a, b in zip(g, p))
        total += len(g)
    return {"accuracy": 100.0 * correct / total if total else 0.0}


def _read_tagged(path: str) -> list[list[tuple[str, str]]]:
    """``word TAG`` (the tag is the last whitespace column) a line, blank line between sentences."""
    file = Path(path)
    if not file.exists():
        raise DataError(f"{path}: file not found (expected 'word TAG' lines, blank line between sentences)")
    sentences: list[list[tuple[str, str]]] = [[]]
    for lineno, line in enumerate(read_text(file).splitlines(), start=1):
        cols = line.split()
        if not cols:
            if sentences[-1]:
                sentences.append([])
            continue
        if len(cols) < 2:
            raise DataError(f"{path}:{lineno}: expected 'word TAG', found {line!r}")
        sentences[-1].append((cols[0], cols[-1]))
    return [s for s in sentences if s]


def score_files(gold_path: str, pred_path: str) -> dict[str, float]:
    """Accuracy of a predicted ``word TAG`` file against the gold one (same words, same order)."""
    gold, pred = _read_tagged(gold_path), _read_tagged(pred_path)
    if len(gold) != len(pred):
        raise DataError(f"{pred_path}: {len(pred)} sentences, expected {len(gold)} as in {gold_path}")
    for i, (g, p) in enumerate(zip(gold, pred)):
        if [w for w, _ in g] != [w for w, _ in p]:
            raise DataError(f"{pred_path}: sentence {i + 1} has different words from {gold_path}")
    return token_accuracy([[t for _, t in s] for s in gold], [[t for _, t in s] for s in pred])
