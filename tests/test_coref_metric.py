"""MUC / B-cubed / CEAF-e with the reference scorer v8.01's semantics; numbers worked out by hand in comments."""
from __future__ import annotations

from pathlib import Path

import pytest

from elmo_bench.tasks.coref.metric import _hungarian_max, score_documents, score_files
from elmo_bench.tasks.coref.writer import write_conll

a, b, c, d, e, x = (0, 0), (2, 2), (4, 5), (7, 7), (9, 9), (11, 11)


def approx(res: dict, name: str, p: float, r: float, f1: float) -> None:
    assert res[name]["p"] == pytest.approx(p)
    assert res[name]["r"] == pytest.approx(r)
    assert res[name]["f1"] == pytest.approx(f1)


def test_split_and_merged_clusters() -> None:
    # key K1={a,b,c} K2={d,e}; response R1={a,b} R2={c,d,e}
    res = score_documents([([[a, b, c], [d, e]], [[a, b], [c, d, e]])])
    # MUC: key links 2+1=3; correct: R1 hits K1,K1 → 1, R2 hits K1,K2,K2 → 1 → 2; response links 1+2=3 → P=R=F=2/3
    approx(res, "muc", 200 / 3, 200 / 3, 200 / 3)
    # B3: a,b: P 2/2, R 2/3; c: P 1/3, R 1/3; d,e: P 2/3, R 2/2 → P = R = (11/3)/5 = 11/15
    approx(res, "bcub", 100 * 11 / 15, 100 * 11 / 15, 100 * 11 / 15)
    # CEAF-e: phi4(K1,R1)=4/5, phi4(K2,R2)=4/5 (better than K1-R2 1/3) → 1.6 over 2 key / 2 response entities
    approx(res, "ceafe", 80.0, 80.0, 80.0)
    assert res["conll_f1"] == pytest.approx((200 / 3 + 1100 / 15 + 80) / 3)


def test_all_singleton_response() -> None:
    # key K1={a,b}; response {a} {b}
    res = score_documents([([[a, b]], [[a], [b]])])
    # MUC: 0 correct links, 1 key link, 0 response links → P = 0 (no division by zero), R = 0, F1 = 0
    approx(res, "muc", 0.0, 0.0, 0.0)
    # B3: a and b: P 1/1, R 1/2 → P = 1, R = 1/2, F1 = 2/3
    approx(res, "bcub", 100.0, 50.0, 200 / 3)
    # CEAF-e: phi4(K1,{a}) = 2/3; one key entity, two response entities → R = 2/3, P = 1/3, F1 = 4/9
    approx(res, "ceafe", 100 / 3, 200 / 3, 400 / 9)


def test_twinless_and_missing_mentions() -> None:
    # key K1={a,b,c}; response R1={a,b,x} (x not in key, c missing)
    res = score_documents([([[a, b, c]], [[a, b, x]])])
    # MUC: correct 1 (a-b), key links 2, response links 2 → 50/50
    approx(res, "muc", 50.0, 50.0, 50.0)
    # B3 (v8.01): a,b: P 2/3, R 2/3; x adds 0 to P; the missing c adds 0 to R → P = (4/3)/3, R = (4/3)/3 = 4/9
    approx(res, "bcub", 400 / 9, 400 / 9, 400 / 9)
    # CEAF-e: phi4 = 2·2/6 = 2/3 over 1 key and 1 response entity
    approx(res, "ceafe", 200 / 3, 200 / 3, 200 / 3)


def test_twinless_singleton_entity_counts_in_bcub_and_ceafe_not_muc() -> None:
    # key K1={a,b}; response R1={a,b}, R2={x}
    res = score_documents([([[a, b]], [[a, b], [x]])])
    approx(res, "muc", 100.0, 100.0, 100.0)              # x's entity has no links
    approx(res, "bcub", 200 / 3, 100.0, 80.0)             # P = (1+1+0)/3, R = 2/2, F1 = 2·(2/3)/(5/3)
    approx(res, "ceafe", 50.0, 100.0, 200 / 3)            # numerator 1, 1 key entity, 2 response entities


def test_documents_without_mentions() -> None:
    empty = score_documents([([], [])])
    for name in ("muc", "bcub", "ceafe"):
        approx(empty, name, 0.0, 0.0, 0.0)
    assert empty["conll_f1"] == 0.0
    # an empty document adds nothing to the summed numerators/denominators
    one = score_documents([([[a, b, c], [d, e]], [[a, b], [c, d, e]])])
    both = score_documents([([], []), ([[a, b, c], [d, e]], [[a, b], [c, d, e]])])
    assert both == one


def test_repeated_response_mention_dropped() -> None:
    # response repeats a in a second entity: the repeat is dropped, leaving R1={a,b}, R2={d,e} → perfect
    res = score_documents([([[a, b], [d, e]], [[a, b], [a, d, e]])])
    assert res["conll_f1"] == pytest.approx(100.0)


def test_hungarian_fallback_matches_scipy_value() -> None:
    sim = [[0.8, 1 / 3, 0.1], [0.0, 0.8, 0.5]]
    assert _hungarian_max(sim) == pytest.approx(1.6)
    assert _hungarian_max([[0.2], [0.9], [0.4]]) == pytest.approx(0.9)


def conll(docs: list[tuple[str, list[list[str]]]]) -> str:
    """docs: (name, sentences of (word, coref cell)) → LitBank-style tab-separated text."""
    lines = []
    for name, sents in docs:
        lines.append(f"#begin document ({name}); part 0")
        for sent in sents:
            for i, (w, cell) in enumerate(sent):
                lines.append("\t".join([name, "0", str(i), w, "_", "_", "_", "_", "_", "_", "_", "_", cell]))
            lines.append("")
        lines.append("#end document")
    return "\n".join(lines) + "\n"


KEY_A = [[("Ann", "(1)"), ("met", ""), ("Bo", "(2)"), (".", "")],
         [("She", "(1)"), ("and", ""), ("her", "(3|(1)"), ("dog", "3)"), ("ran", "")]]


def test_score_files_matches_documents_by_name(tmp_path: Path) -> None:
    key = tmp_path / "key.conll"
    key.write_text(conll([("docA", KEY_A), ("docB", [[("Rain", ""), ("fell", "")]])]))
    # key docA: entity 1 = {(0,0), (4,4), (6,6)}, entity 2 = {(2,2)}, entity 3 = {(6,7)} (flattened tokens)
    resp_a = [[("Ann", "(5)"), ("met", ""), ("Bo", "(5)"), (".", "")],
              [("She", "(7)"), ("and", ""), ("her", "(7)"), ("dog", ""), ("ran", "")]]
    resp = tmp_path / "resp.conll"
    resp.write_text(conll([("docC", [[("x", "(1)")]]), ("docB", [[("Rain", ""), ("fell", "")]]), ("docA", resp_a)]))
    # response docA: {(0,0),(2,2)} and {(4,4),(6,6)}; (6,7) missing
    res = score_files(str(key), str(resp))
    # MUC: key links 2+0+0 = 2; correct: R1 hits K1,K2 → 0, R2 hits K1,K1 → 1; response links 2 → P = R = 50
    approx(res, "muc", 50.0, 50.0, 50.0)
    # B3: (0,0): P 1/2, R 1/3; (2,2): P 1/2, R 1/1; (4,4),(6,6): P 2/2, R 2/3 each
    #   P = (1/2+1/2+1+1)/4 = 3/4; R = (1/3+1+2/3+2/3)/5 key mentions = (8/3)/5 = 8/15
    approx(res, "bcub", 75.0, 100 * 8 / 15, 100 * 2 * 0.75 * (8 / 15) / (0.75 + 8 / 15))
    # CEAF-e: K1-R2 phi4 = 2·2/(3+2) = 4/5, K2-R1 = 2·1/(1+2) = 2/3 → 22/15 over 3 key, 2 response entities
    approx(res, "ceafe", 100 * 11 / 15, 100 * 22 / 45, 100 * 2 * (11 / 15) * (22 / 45) / (11 / 15 + 22 / 45))


def test_writer_roundtrip(tmp_path: Path) -> None:
    key = tmp_path / "key.conll"
    key.write_text(conll([("docA", KEY_A)]))
    pred = {("docA", 0): [[(0, 0), (4, 4)], [(4, 7), (6, 7)], [(2, 2)]]}  # nested mentions (4,7) ⊃ (6,7)
    out = tmp_path / "pred.conll"
    write_conll(key, out, pred)
    from elmo_bench.tasks.coref.metric import read_clusters

    back = read_clusters(out)[("docA", 0)]
    assert sorted(map(sorted, back)) == sorted(map(sorted, pred[("docA", 0)]))
    assert score_files(str(key), str(out)) == score_documents([(read_clusters(key)[("docA", 0)], pred[("docA", 0)])])
    assert score_files(str(key), str(key))["conll_f1"] == pytest.approx(100.0)
