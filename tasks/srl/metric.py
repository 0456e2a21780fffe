"""Span precision / recall / F1 with the semantics of srl-eval.pl (CoNLL-2005), the "Overall" line.

Rules reproduced from srl-eval.pl:

* A props sentence: column 1 holds the target verb (or ``-``); the k-th argument column belongs to the k-th
  target. Propositions are matched by verb position; a predicted proposition whose verb differs from the gold one
  (or that is missing) counts every gold argument as missed and none as excess; a predicted proposition without a
  gold one is skipped.
* Phrases of a column are read in order of start (ascending) then end (descending). A ``C-X`` phrase continues
  the latest X argument of the same proposition: the two become one discontinuous argument of type X spanning
  from the first piece's start to the last piece's end. A ``C-X`` with no preceding X becomes a plain X argument.
  ``R-X`` arguments are ordinary arguments of type ``R-X``.
* A predicted argument is correct only if a gold argument has the same (start, end), the same type and, for
  discontinuous arguments, exactly the same pieces; single vs discontinuous never match.
* Arguments of type V (including a V continued by C-V) are excluded from the counts.
* precision = 100·ok/(ok+op), recall = 100·ok/(ok+ms), F1 = 2PR/(P+R), each 0 when its denominator is 0.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.srl_conll import read_props_blocks
from elmo_bench.data.srl_spans import bio_to_spans, spans_to_brackets

EXCLUDED = frozenset({"V"})


@dataclass
class Arg:
    """An argument: ``pieces`` is empty for a single phrase, else the list of (start, end) pieces."""

    type: str
    start: int
    end: int
    pieces: list[tuple[int, int]] = field(default_factory=list)

    @property
    def single(self) -> bool:
        return not self.pieces


_OPEN = re.compile(r"^\(((?:\\\*|[^*(])+)")
_CLOSE = re.compile(r"^([^)]*)\)")


def _phrases(tags: Sequence[str], where: str) -> list[tuple[int, int, str]]:
    """Start-end tags → phrases (start, end, type) in srl-eval order: start ascending, end descending. Nested
    phrases are allowed here, as in srl-eval; a later phrase with the same (start, end) replaces the earlier."""
    table: dict[tuple[int, int], str] = {}
    stack: list[tuple[int, str]] = []
    for wid, tag in enumerate(tags):
        rest = tag
        while not rest.startswith("*"):
            m = _OPEN.match(rest)
            if m is None:
                raise DataError(f"{where}: word {wid + 1}: bad start-end tag {tag!r}; expected '(X*', '*' or '*)'")
            stack.append((wid, m.group(1)))
            rest = rest[m.end():]
        rest = rest[1:]
        while rest:
            m = _CLOSE.match(rest)
            if m is None:
                raise DataError(f"{where}: word {wid + 1}: bad closing part in tag {tag!r}")
            if not stack:
                raise DataError(f"{where}: word {wid + 1}: closing bracket in {tag!r} without an open phrase")
            start, typ = stack.pop()
            if m.group(1) and m.group(1) != typ:
                raise DataError(f"{where}: word {wid + 1}: closing type {m.group(1)!r} does not match {typ!r}")
            table[(start, wid)] = typ
            rest = rest[m.end():]
    if stack:
        raise DataError(f"{where}: phrase {stack[-1][1]!r} opened at word {stack[-1][0] + 1} is never closed")
    return [(s, e, t) for (s, e), t in sorted(table.items(), key=lambda kv: (kv[0][0], -kv[0][1]))]


def load_se_tagging(tags: Sequence[str], where: str = "<props>") -> list[Arg]:
    """One argument column → arguments, merging ``C-X`` continuations into discontinuous X arguments."""
    args: list[Arg] = []
    latest: dict[str, Arg] = {}
    for start, end, typ in _phrases(tags, where):
        if typ.startswith("C-"):
            base = typ[2:]
            head = latest.get(base)
            if head is not None:
                if head.single:
                    head.pieces.append((head.start, head.end))
                head.pieces.append((start, end))
                head.end = end
                continue
            typ = base
        arg = Arg(typ, start, end)
        args.append(arg)
        latest[typ] = arg
    return args


def evaluate_proposition(gold: Sequence[Arg], pred: Sequence[Arg]) -> tuple[int, int, int]:
    """(correct, excess, missed) over non-V arguments, as srl-eval's discriminate_args + evaluate_proposition."""
    table: dict[tuple[int, int], Arg] = {}
    for a in gold:
        table[(a.start, a.end)] = a
    ok = op = 0
    for a in pred:
        g = table.get((a.start, a.end))
        good = False
        if g is not None and g.type == a.type:
            if g.single and a.single:
                good = True
            elif not g.single and not a.single:
                good = set(g.pieces) == set(a.pieces) and len(set(a.pieces)) == len(a.pieces)
        if good:
            del table[(a.start, a.end)]
            ok += a.type not in EXCLUDED
        else:
            op += a.type not in EXCLUDED
    ms = sum(a.type not in EXCLUDED for a in table.values())
    return ok, op, ms


def prf(ok: int, op: int, ms: int) -> dict[str, float]:
    """srl-eval's precrecf1, in percent."""
    p = 100.0 * ok / (ok + op) if ok + op > 0 else 0.0
    r = 100.0 * ok / (ok + ms) if ok + ms > 0 else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return {"precision": p, "recall": r, "f1": f}


Sentence = tuple[list[str], list[list[str]]]  # (targets column, argument columns)


def read_props(path: str | Path) -> list[Sentence]:
    """A props file (plain or .gz) → per sentence (targets column, argument columns)."""
    out: list[Sentence] = []
    for rows, lines in read_props_blocks(path):
        width = len(rows[0])
        for row, ln in zip(rows, lines):
            if len(row) != width:
                raise DataError(f"{path}:{ln}: expected {width} columns like the sentence's first row, got {len(row)}")
        targets = [r[0] for r in rows]
        if sum(t != "-" for t in targets) != width - 1:
            raise DataError(f"{path}:{lines[0]}: {sum(t != '-' for t in targets)} target verbs but "
                            f"{width - 1} argument columns")
        out.append((targets, [[r[c] for r in rows] for c in range(1, width)]))
    return out


def _props_of(sentence: Sentence, where: str) -> dict[int, tuple[str, list[Arg]]]:
    targets, cols = sentence
    positions = [i for i, t in enumerate(targets) if t != "-"]
    return {pos: (targets[pos], load_se_tagging(col, f"{where} column {k + 2}"))
            for k, (pos, col) in enumerate(zip(positions, cols))}


def score_sentences(gold: Sequence[Sentence], pred: Sequence[Sentence],
                    gold_name: str = "gold", pred_name: str = "pred") -> dict[str, float]:
    """Overall precision/recall/F1 of aligned sentences (plus the raw counts ok/op/ms)."""
    if len(gold) != len(pred):
        raise DataError(f"{pred_name}: {len(pred)} sentences but {gold_name} has {len(gold)}")
    ok = op = ms = 0
    for n, (gs, ps) in enumerate(zip(gold, pred)):
        if len(gs[0]) != len(ps[0]):
            raise DataError(f"{pred_name}: sentence {n + 1} has {len(ps[0])} words but {gold_name} has {len(gs[0])}")
        gprops = _props_of(gs, f"{gold_name} sentence {n + 1}")
        pprops = _props_of(ps, f"{pred_name} sentence {n + 1}")
        for pos, (verb, gargs) in gprops.items():
            pverb, pargs = pprops.get(pos, (None, []))
            if pverb != verb:
                pargs = []
            c = evaluate_proposition(gargs, pargs)
            ok, op, ms = ok + c[0], op + c[1], ms + c[2]
    return {**prf(ok, op, ms), "correct": ok, "excess": op, "missed": ms}


def score_files(gold_props: str, pred_props: str) -> dict[str, float]:
    """``elmo-bench score srl GOLD PRED``: srl-eval.pl's Overall precision/recall/F1 in percent."""
    gold = read_props(gold_props)
    if not gold:
        raise DataError(f"{gold_props}: no sentences; expected a CoNLL-2005 props file")
    res = score_sentences(gold, read_props(pred_props), str(gold_props), str(pred_props))
    return {k: res[k] for k in ("precision", "recall", "f1")}


def score_bio(gold_tags: Iterable[Sequence[str]], pred_tags: Iterable[Sequence[str]]) -> dict[str, float]:
    """Per-proposition BIO tag sequences (one pair per predicate) scored with srl-eval semantics."""
    ok = op = ms = 0
    for g, p in zip(gold_tags, pred_tags, strict=True):
        gargs = load_se_tagging(spans_to_brackets(bio_to_spans(g), len(g)))
        pargs = load_se_tagging(spans_to_brackets(bio_to_spans(p), len(p)))
        c = evaluate_proposition(gargs, pargs)
        ok, op, ms = ok + c[0], op + c[1], ms + c[2]
    return {**prf(ok, op, ms), "correct": ok, "excess": op, "missed": ms}
