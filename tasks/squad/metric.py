"""SQuAD v1.1 exact match and F1 with the official ``evaluate-v1.1.py`` semantics, in percent.

normalize_answer: lowercase → drop ASCII punctuation → drop the articles a/an/the (whole words) → collapse
whitespace. EM and bag-of-token F1 per gold answer, max over a question's gold answers, averaged over every
question of the gold file; a question without a prediction scores 0 and is reported on stderr.
"""
from __future__ import annotations

import json
import re
import string
import sys
from collections import Counter
from typing import Callable, Iterable, Mapping, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import read_text

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace (the official order)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def f1_score(prediction: str, ground_truth: str) -> float:
    """Token-level F1 between normalised strings (a fraction in [0, 1]); 0 when nothing overlaps."""
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(ground_truth).split()
    num_same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def exact_match_score(prediction: str, ground_truth: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def metric_max_over_ground_truths(metric_fn: Callable[[str, str], float], prediction: str,
                                  ground_truths: Iterable[str]) -> float:
    return max(metric_fn(prediction, gt) for gt in ground_truths)


def evaluate(gold: Sequence[tuple[str, Sequence[str]]], predictions: Mapping[str, str]) -> tuple[dict[str, float], list[str]]:
    """gold: (question id, gold answer texts) for every question; predictions: id → answer text.

    Returns ({"exact_match", "f1"} in percent over all gold questions, ids that had no prediction).
    """
    em = f1 = 0.0
    missing: list[str] = []
    for qid, answers in gold:
        if qid not in predictions:
            missing.append(qid)
            continue
        pred = predictions[qid]
        em += metric_max_over_ground_truths(exact_match_score, pred, answers)
        f1 += metric_max_over_ground_truths(f1_score, pred, answers)
    total = len(gold)
    if total == 0:
        return {"exact_match": 0.0, "f1": 0.0}, missing
    return {"exact_match": 100.0 * em / total, "f1": 100.0 * f1 / total}, missing


def gold_from_squad(obj: Mapping) -> list[tuple[str, list[str]]]:
    """(id, answer texts) for every question of a parsed official SQuAD object, in file order."""
    return [(qa["id"], [a["text"] for a in qa["answers"]])
            for article in obj["data"] for para in article["paragraphs"] for qa in para["qas"]]


def score_files(gold_path: str, pred_path: str) -> dict[str, float]:
    """``elmo-bench score squad GOLD.json PRED.json`` → {"exact_match": EM, "f1": F1} (percent), as the official
    script; unanswered questions are printed to stderr with the official message."""
    from elmo_bench.tasks.squad.reader import load_json  # the same parsing (and .gz support) as training

    gold_obj = load_json(gold_path)
    try:
        gold = gold_from_squad(gold_obj)
    except (KeyError, TypeError) as err:
        raise DataError(f"{gold_path}: missing field {err}; expected the SQuAD v1.1 layout") from None
    try:
        preds = json.loads(read_text(pred_path))
    except json.JSONDecodeError as err:
        raise DataError(f"{pred_path}:{err.lineno}: malformed JSON ({err.msg}); expected {{question id: answer}}")\
            from None
    if not isinstance(preds, dict):
        raise DataError(f"{pred_path}: expected a JSON object {{question id: answer text}}")
    if not gold:
        raise DataError(f"{gold_path}: no questions; expected a SQuAD v1.1 file with at least one question")
    scores, missing = evaluate(gold, preds)
    for qid in missing:
        print(f"Unanswered question {qid} will receive score 0.", file=sys.stderr)
    return scores
