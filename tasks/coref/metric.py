"""MUC, B-cubed and CEAF-e (phi4) exactly as the reference coreference scorer v8.01 computes them.

Per document (mentions matched by exact (start, end) span):

* key mentions get ids in order; a response mention repeated later in the response is dropped (first kept);
  response mentions not in the key get new ids (they are "twinless").
* MUC: correct links = Σ over response entities of (its key-matched mentions − distinct key entities they hit);
  key links = Σ(|K|−1), response links = Σ(|R|−1) (twinless response mentions of non-singleton entities stay,
  singleton entities contribute 0). An all-singleton response has 0 response links → precision 0, recall 0.
* B-cubed: precision sums, over every response mention m, |R(m) ∩ K(m)| / |R(m)| (0 when m is twinless),
  divided by the number of response mentions; recall sums, over the same response mentions, |R(m) ∩ K(m)|/|K(m)|,
  divided by the number of key mentions (a key mention missing from the response adds 0).
* CEAF-e: phi4(K, R) = 2|K ∩ R| / (|K| + |R|); the optimal one-to-one alignment of key and response entities
  (Kuhn-Munkres) gives the numerator; denominators are the numbers of key and of response entities.

Numerators and denominators are summed over documents (documents matched by (name, part); a key document absent
from the response is scored against an empty response, response-only documents are ignored), then
P = num/den (0 when den is 0), F1 = 2PR/(P+R) (0 when P+R is 0). All values are in percent; ``conll_f1`` is the
mean of the three F1s.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.conll2012_coref import Cluster, iter_documents

Counts = tuple[float, float, float, float]  # recall num, recall den, precision num, precision den


def _ids(key: Sequence[Cluster], response: Sequence[Cluster]) -> tuple[list[list[int]], list[list[int]]]:
    """Clusters of spans → clusters of mention ids, with the scorer's id assignment and response de-duplication."""
    key_id: dict[tuple[int, int], int] = {}
    count = 0
    for ent in key:
        for m in ent:
            key_id[tuple(m)] = count  # a repeated key span keeps the last id, as in the scorer
            count += 1
    k_chains = [[key_id[tuple(m)] for m in ent] for ent in key]
    seen: dict[tuple[int, int], int] = {}
    r_chains = []
    for ent in response:
        chain = []
        for m in ent:
            m = tuple(m)
            if m in seen:
                continue  # repeated response mention: removed
            if m in key_id:
                seen[m] = key_id[m]
            else:
                seen[m] = count
                count += 1
            chain.append(seen[m])
        if chain:
            r_chains.append(chain)
    return k_chains, r_chains


def _index(chains: Sequence[Sequence[int]]) -> dict[int, int]:
    return {m: i for i, c in enumerate(chains) for m in c}


def muc(key: Sequence[Sequence[int]], response: Sequence[Sequence[int]]) -> Counts:
    k_index = _index(key)
    correct = 0
    for ent in response:
        hit = [k_index[m] for m in ent if m in k_index]
        correct += len(hit) - len(set(hit))
    key_links = sum(len(e) - 1 for e in key if e)
    resp_links = sum(len(e) - 1 for e in response if e)
    return correct, key_links, correct, resp_links


def bcubed(key: Sequence[Sequence[int]], response: Sequence[Sequence[int]]) -> Counts:
    k_index = _index(key)
    acc_p = acc_r = 0.0
    for ent in response:
        members = set(ent)
        for m in ent:
            if m not in k_index:
                continue  # twinless: adds 0 to precision and to recall
            k_ent = key[k_index[m]]
            common = len(members & set(k_ent))
            acc_p += common / len(ent)
            acc_r += common / len(k_ent)
    return acc_r, sum(len(e) for e in key), acc_p, sum(len(e) for e in response)


def phi4(a: Sequence[int], b: Sequence[int]) -> float:
    d = len(a) + len(b)
    return 2 * len(set(a) & set(b)) / d if d else 0.0


def _max_assignment(sim: list[list[float]]) -> float:
    """Maximum total similarity of a one-to-one alignment of rows to columns."""
    if not sim or not sim[0]:
        return 0.0
    try:
        import numpy as np
        from scipy.optimize import linear_sum_assignment
    except ImportError:  # pragma: no cover - scipy is normally installed
        return _hungarian_max(sim)
    arr = np.asarray(sim, dtype=float)
    rows, cols = linear_sum_assignment(arr, maximize=True)
    return float(arr[rows, cols].sum())


def _hungarian_max(sim: list[list[float]]) -> float:
    """O(n^3) Hungarian algorithm (potentials form) on the square-padded cost 1 - sim; fallback without scipy."""
    n = max(len(sim), len(sim[0]))
    cost = [[1.0 - (sim[i][j] if i < len(sim) and j < len(sim[0]) else 0.0) for j in range(n)] for i in range(n)]
    inf = float("inf")
    u, v, p, way = [0.0] * (n + 1), [0.0] * (n + 1), [0] * (n + 1), [0] * (n + 1)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv, used = [inf] * (n + 1), [False] * (n + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], inf, 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    total = 0.0
    for j in range(1, n + 1):
        i = p[j] - 1
        if i < len(sim) and j - 1 < len(sim[0]):
            total += sim[i][j - 1]
    return total


def ceafe(key: Sequence[Sequence[int]], response: Sequence[Sequence[int]]) -> Counts:
    sim = [[phi4(k, r) for r in response] for k in key]
    num = _max_assignment(sim)
    return num, sum(1 for e in key if e), num, sum(1 for e in response if e)


def _prf(c: Sequence[float]) -> dict[str, float]:
    nr, dr, np_, dp = c
    r = nr / dr if dr else 0.0
    p = np_ / dp if dp else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"p": 100 * p, "r": 100 * r, "f1": 100 * f}


METRICS = (("muc", muc), ("bcub", bcubed), ("ceafe", ceafe))


def document_counts(key: Sequence[Cluster], response: Sequence[Cluster]) -> list[float]:
    """One document's 12 counts: (recall num, recall den, precision num, precision den) of MUC, B-cubed and
    CEAF-e, in that order; the scorer sums them over documents."""
    k, r = _ids(key, [[tuple(m) for m in cluster] for cluster in response])
    return [float(v) for _, fn in METRICS for v in fn(k, r)]


def score_documents(pairs: Iterable[tuple[Sequence[Cluster], Sequence[Cluster]]]) -> dict:
    """(key clusters, response clusters) per document → {"muc", "bcub", "ceafe": {"p","r","f1"}, "conll_f1"}."""
    totals = {name: [0.0, 0.0, 0.0, 0.0] for name, _ in METRICS}
    for key, response in pairs:
        counts = document_counts(key, response)
        for j, (name, _) in enumerate(METRICS):
            for i in range(4):
                totals[name][i] += counts[4 * j + i]
    out: dict = {name: _prf(c) for name, c in totals.items()}
    out["conll_f1"] = (out["muc"]["f1"] + out["bcub"]["f1"] + out["ceafe"]["f1"]) / 3
    return out


def read_clusters(path: str | Path) -> dict[tuple[str, int], list[Cluster]]:
    """Every document of a CoNLL file → {(name, part): clusters}."""
    return {(d["doc_name"], d["part"]): d["clusters"] for d in iter_documents(path)}


def score_files(key_conll: str, response_conll: str) -> dict:
    """``elmo-bench score coref KEY RESPONSE``: v8.01's MUC, B-cubed, CEAF-e and their mean F1, in percent."""
    key = read_clusters(key_conll)
    if not key:
        raise DataError(f"{key_conll}: no documents; expected a CoNLL-2012 key file ('#begin document' lines)")
    resp = read_clusters(response_conll)
    return score_documents((clusters, resp.get(doc, [])) for doc, clusters in key.items())
