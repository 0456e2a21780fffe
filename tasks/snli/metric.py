"""SNLI accuracy (percent), a majority-class baseline for the report, and a file scorer for the CLI."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.tasks.snli.reader import json_lines, open_text, read_jsonl


def accuracy(predictions: Sequence[str], gold: Sequence[str]) -> float:
    """Percent of positions where prediction == gold (0.0 for empty input)."""
    if len(predictions) != len(gold):
        raise ValueError(f"{len(predictions)} predictions for {len(gold)} gold labels")
    if not gold:
        return 0.0
    return 100.0 * sum(p == g for p, g in zip(predictions, gold)) / len(gold)


def majority_class_baseline(train_labels: Sequence[str], test_labels: Sequence[str]) -> dict[str, float | str]:
    """Accuracy of always predicting the most frequent training label (ties: first in sorted order)."""
    if not train_labels:
        raise ValueError("majority baseline needs at least one training label")
    counts = Counter(train_labels)
    top = max(sorted(counts), key=lambda label: counts[label])
    return {"label": top, "accuracy": accuracy([top] * len(test_labels), test_labels)}


def _read_predictions(path: Path) -> dict[str, str]:
    """A JSON object {pairID: label}, or JSON lines each with "pairID" and "label" (or "gold_label")."""
    with open_text(path) as handle:
        text = handle.read()
    try:
        obj = json.loads(text)
        if isinstance(obj, dict):
            return {str(k): str(v) for k, v in obj.items()}
    except json.JSONDecodeError:
        pass
    preds: dict[str, str] = {}
    for line_no, rec in json_lines(path, text.splitlines(), "a {pairID: label} object or JSON lines with pairID "
                                                             "and label"):
        label = rec.get("label", rec.get("gold_label")) if isinstance(rec, dict) else None
        if not isinstance(rec, dict) or "pairID" not in rec or label is None:
            raise DataError(f"{path}:{line_no}: expected fields 'pairID' and 'label'")
        preds[str(rec["pairID"])] = str(label)
    return preds


def score_files(gold_path: str, pred_path: str) -> dict[str, float]:
    """Accuracy of predictions against an official SNLI jsonl (pairs labelled '-' excluded, as in training).

    Gold pairs without a prediction count as wrong and are reported on stderr.
    """
    gold, _ = read_jsonl(gold_path)
    if not gold:
        raise DataError(f"{gold_path}: no labelled pairs; expected an SNLI jsonl gold file")
    preds = _read_predictions(Path(pred_path))
    missing = [ex["id"] for ex in gold if ex["id"] not in preds]
    for pair_id in missing:
        print(f"Unanswered pair {pair_id} will receive score 0.", file=sys.stderr)
    return {"accuracy": accuracy([preds.get(ex["id"], "") for ex in gold], [ex["label"] for ex in gold])}
