"""WSD scoring with the semantics of the Raganato et al. (2017) framework's ``Scorer.java``.

That scorer (a modification of the SemEval-2015 task 13 scorer) does, and so does this module:

* reads both files as ``id key [key ...]`` lines; an id on several lines has the union of its keys (a set, so a
  repeated key counts once); a line with fewer than two fields is skipped;
* ignores system answers for ids absent from the gold file;
* for an answered instance with n distinct keys of which c are among the gold keys, adds c/n to ``correct`` and
  (n-c)/n to ``wrong`` (one key among several gold keys is fully correct: any gold key counts);
* precision = correct / (correct + wrong), i.e. over the answered instances; recall = correct / number of gold
  instances (unanswered ones count as wrong); F1 = 2PR / (P+R), 0 when P+R = 0.

Differences: values are in percent and unrounded (the Java prints one decimal); with nothing answered the Java
precision is NaN, here 0.0; fields are split on any whitespace, the Java splits on single spaces.
"""
from __future__ import annotations

from typing import Mapping, Set

from elmo_bench.probe.wsd.data import read_key_file


def score(gold: Mapping[str, Set[str]], predicted: Mapping[str, Set[str]]) -> dict[str, float]:
    """{"precision", "recall", "f1"} in percent for ``{instance id: keys}`` maps."""
    correct = wrong = 0.0
    for iid, keys in predicted.items():
        if iid not in gold or not keys:
            continue
        hits = sum(1 for key in keys if key in gold[iid])
        correct += hits / len(keys)
        wrong += (len(keys) - hits) / len(keys)
    precision = correct / (correct + wrong) if correct + wrong else 0.0
    recall = correct / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": 100.0 * precision, "recall": 100.0 * recall, "f1": 100.0 * f1}


class _WsdScorer:
    """``elmo-bench score wsd GOLD_KEY PRED_KEY``: the probe's file scorer, in a task's shape (Task.score_files)."""

    score_file_count = 2

    def score_files(self, *paths: str) -> dict[str, float]:
        return score_files(*paths)


def score_files(gold_key: str, pred_key: str) -> dict[str, float]:
    """``elmo-bench score wsd GOLD_KEY PRED_KEY`` → {"precision": P, "recall": R, "f1": F} in percent."""
    return score(read_key_file(gold_key), read_key_file(pred_key, strict=False))


SCORER = _WsdScorer()
