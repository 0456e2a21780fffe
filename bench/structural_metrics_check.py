"""Our structural-probe metrics against the functions of Hewitt & Manning's own reporter, on the same predictions.

Random trees (2..``--max-words`` words, random XPOS from a list with the authors' punctuation tags), gold tree
distances and depths, and noisy or random predictions; then UUAS (their ``prims_matrix_to_edges``, micro-averaged),
DSpr (scipy's ``spearmanr`` per word, averaged per length, then over lengths 5..50) and root accuracy (their
``get_nopunct_argmin``), each computed both ways. Prints, last, one JSON line with both values of each and
``"identical": true|false``; without ``--reference``, one line saying it was skipped. Needs scipy (their code does).

    python bench/structural_metrics_check.py --reference DIR [--sentences 300]
"""
from __future__ import annotations

import argparse
import json
import sys
import types
from collections import defaultdict
from pathlib import Path

import numpy as np

TAGS = ["NN", "VB", ",", ".", "DT", "-LRB-", "``"]


def random_sentence(rng: np.random.Generator, max_words: int) -> tuple[list[int], list[str]]:
    n = int(rng.integers(2, max_words + 1))
    order = rng.permutation(n)
    heads = [0] * n
    for k in range(1, n):
        heads[order[k]] = int(order[rng.integers(0, k)]) + 1
    return heads, [TAGS[i] for i in rng.integers(0, len(TAGS), n)]


def theirs(reporter, sentences, preds, golds, depth_preds, depth_golds) -> dict[str, float]:
    from scipy.stats import spearmanr

    correct = total = roots = 0
    per_length = defaultdict(list)
    for (heads, xpos), p, g, dp, dg in zip(sentences, preds, golds, depth_preds, depth_golds):
        gold_edges = {tuple(sorted(e)) for e in reporter.prims_matrix_to_edges(g, xpos, xpos)}
        pred_edges = {tuple(sorted(e)) for e in reporter.prims_matrix_to_edges(p, xpos, xpos)}
        correct += len(gold_edges & pred_edges)
        total += len(gold_edges)
        per_length[len(g)].extend(spearmanr(a, b).correlation for a, b in zip(p, g))
        roots += list(dg).index(0) == reporter.get_nopunct_argmin(dp.copy(), xpos, xpos)
    means = [np.mean(per_length[n]) for n in range(5, 51) if n in per_length]
    return {"uuas": 100.0 * correct / total, "dspr": float(np.mean(means)), "root_acc": 100.0 * roots / len(golds)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reference", default=None, help="a checkout of john-hewitt/structural-probes")
    p.add_argument("--sentences", type=int, default=300)
    p.add_argument("--max-words", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if not args.reference:
        print(json.dumps({"skipped": "no --reference DIR (a checkout of john-hewitt/structural-probes) given"}))
        return 0
    sys.modules.setdefault("seaborn", types.SimpleNamespace(set=lambda **kw: None))  # their plots only
    sys.path.insert(0, str(Path(args.reference) / "structural-probes"))
    import reporter

    from elmo_bench.probe.lib.conllu_trees import depths
    from elmo_bench.probe.structural import metrics as sm

    rng = np.random.default_rng(args.seed)
    sentences = [random_sentence(rng, args.max_words) for _ in range(args.sentences)]
    golds = [sm.tree_distances(h) for h, _ in sentences]
    preds = []
    for i, g in enumerate(golds):
        noise = rng.integers(0, 3, g.shape) if i % 2 else rng.random(g.shape) * 6
        p = (g + noise if i % 2 else noise).astype(np.float32)
        preds.append(np.minimum(p, p.T))
    depth_golds = [np.asarray(depths(h), dtype=np.float64) for h, _ in sentences]
    depth_preds = [d + rng.random(len(d)) * 2 for d in depth_golds]
    punct = [sm.punctuation(x, x) for _, x in sentences]
    ours = {"uuas": sm.uuas(preds, golds, punct).value, "dspr": sm.dspr(preds, golds),
            "root_acc": sm.root_accuracy(depth_preds, depth_golds, punct).value}
    reference = theirs(reporter, sentences, preds, golds, depth_preds, depth_golds)
    same = all(abs(ours[k] - reference[k]) < 1e-9 for k in ours)
    print(json.dumps({"sentences": args.sentences, "ours": ours, "theirs": reference, "identical": same}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
