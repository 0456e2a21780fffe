"""Read SQuAD v1.1 (official JSON, optionally gzipped, or the hub name ``squad``) into one example per question.

Example fields:
    id            question id (the key of the official prediction file)
    question      list[str] tokens
    context       list[str] tokens of the paragraph (shared list object between questions of a paragraph)
    context_text  the paragraph string; offsets[i] = (start, end) chars of context[i] in it
    answers       every gold answer text (the metric takes the max over all of them)
    spans         the token span (first, last) of each gold answer, None where it could not be aligned
    span          the first aligned span (the training target), None when no answer aligned
    title, article  the article title and its index in the file

Nothing is dropped silently: ``SquadStats`` counts answers whose text differs from the context at answer_start
(unalignable), aligned answers whose token span is wider than the answer (inexact, token boundaries inside a word),
and any contexts truncated by ``max_context_tokens`` with the answers that lost their span to the cut.
"""
from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import open_text
from elmo_bench.tasks.api import Example
from elmo_bench.tasks.squad.tokenize import char_span_to_tokens, tokenize_with_offsets


@dataclass
class SquadStats:
    """Counts for the report; ``unalignable`` + ``lost_to_truncation`` answers have span None."""

    articles: int = 0
    paragraphs: int = 0
    questions: int = 0
    answers: int = 0
    unalignable: int = 0
    inexact: int = 0
    questions_without_span: int = 0
    truncated_contexts: int = 0
    lost_to_truncation: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def load_json(path: str | Path) -> dict[str, Any]:
    """Parse a SQuAD JSON file (``.gz`` by suffix); DataError names the file, line and column when malformed."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found; expected a SQuAD v1.1 JSON file")
    with open_text(path) as handle:
        try:
            obj = json.load(handle)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{err.lineno}: malformed JSON ({err.msg} at column {err.colno}); "
                            f"expected the SQuAD v1.1 JSON object") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("data"), list):
        raise DataError(f"{path}: missing field 'data' (a list of articles); expected the SQuAD v1.1 JSON object")
    return obj


def _field(record: Any, key: str, kind: type | tuple[type, ...], where: str, path: str | Path) -> Any:
    """record[key] checked for presence and type, else a DataError naming the record and the file."""
    if not isinstance(record, dict) or key not in record:
        raise DataError(f"{path}: {where}: missing field '{key}'")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DataError(f"{path}: {where}: field '{key}' is {type(value).__name__}; expected {names}")
    return value


def article_indices(n_articles: int, articles: Sequence[int] | None, path: str | Path) -> list[int]:
    """The article indices of ``articles`` = [first, stop) (all when None), checked against the file's count."""
    lo, hi = (0, n_articles) if articles is None else (int(articles[0]), int(articles[1]))
    if not 0 <= lo <= hi <= n_articles:
        raise DataError(f"{path}: article range [{lo}, {hi}) outside the file's {n_articles} articles")
    return list(range(lo, hi))


def carve_articles(indices: Sequence[int], n_dev: int, seed: int, path: str | Path) -> tuple[list[int], list[int]]:
    """Split article indices into (train, dev): ``n_dev`` articles drawn with ``random.Random(seed)``, the rest
    train, both in file order. By article, so no paragraph or question of dev has a sibling in train."""
    if not 0 < n_dev < len(indices):
        raise DataError(f"{path}: dev_from_train.articles={n_dev}, expected between 1 and {len(indices) - 1} "
                        f"(the training data has {len(indices)} articles)")
    dev = set(random.Random(seed).sample(list(indices), n_dev))
    return [i for i in indices if i not in dev], sorted(dev)


def examples_from_squad(obj: dict[str, Any], path: str | Path, articles: Sequence[int] | None = None,
                        max_context_tokens: int | None = None,
                        indices: Sequence[int] | None = None,
                        mismatched_answers: str = "count") -> tuple[list[Example], SquadStats]:
    """Examples from a parsed SQuAD object; ``articles`` = [first, stop) restricts to a slice of articles, or
    ``indices`` to any set of them (each example keeps its article's index in the file).

    An answer whose text is not the context at its ``answer_start`` (a shifted offset, an edited context) would
    train on no span or score against the wrong text: ``mismatched_answers="refuse"`` (every run: the config's
    ``data.answer_offsets``) makes it a DataError naming the file and question id, after any structural error;
    ``"count"`` (auditing a file) keeps it for the metric, unaligned, and counts it in ``stats.unalignable``."""
    data = obj["data"]
    if indices is None:
        indices = article_indices(len(data), articles, path)
    stats = SquadStats()
    examples: list[Example] = []
    mismatch: str | None = None  # the first answer whose text disagrees with its offsets (after structural errors)
    for a_idx in indices:
        article = data[a_idx]
        where = f"article {a_idx}"
        title = str(article.get("title", "")) if isinstance(article, dict) else ""
        stats.articles += 1
        for p_idx, para in enumerate(_field(article, "paragraphs", list, where, path)):
            p_where = f"{where} paragraph {p_idx}"
            context_text = _field(para, "context", str, p_where, path)
            all_tokens, all_offsets = tokenize_with_offsets(context_text)
            kept = len(all_tokens)
            if max_context_tokens is not None and kept > max_context_tokens:
                kept = int(max_context_tokens)
                stats.truncated_contexts += 1
            tokens, offsets = all_tokens[:kept], all_offsets[:kept]
            stats.paragraphs += 1
            for q_idx, qa in enumerate(_field(para, "qas", list, p_where, path)):
                qid = str(_field(qa, "id", (str, int), f"{p_where} question {q_idx}", path))
                q_where = f"question id {qid}"
                question = _field(qa, "question", str, q_where, path)
                answers = _field(qa, "answers", list, q_where, path)
                if not answers:
                    raise DataError(f"{path}: {q_where}: 'answers' is empty; expected at least one gold answer")
                texts, spans, disagrees = _gold_answers(answers, context_text, all_offsets, kept, q_where, path, stats)
                mismatch = mismatch or disagrees
                stats.questions += 1
                stats.answers += len(answers)
                aligned = [s for s in spans if s is not None]
                stats.questions_without_span += not aligned
                q_tokens, _ = tokenize_with_offsets(question)
                examples.append({"id": qid, "question": q_tokens, "context": tokens, "context_text": context_text,
                                 "offsets": offsets, "answers": texts, "spans": spans,
                                 "span": aligned[0] if aligned else None, "title": title, "article": a_idx})
    if mismatch is not None and mismatched_answers == "refuse":
        raise DataError(mismatch)
    return examples, stats


def _gold_answers(answers: list, context_text: str, all_offsets: list[tuple[int, int]], kept: int, q_where: str,
                  path: str | Path, stats: SquadStats) -> tuple[list[str], list, str | None]:
    """One question's gold answers: their texts, their token spans in the kept context (None: unalignable), and
    the first answer whose text disagrees with its offsets, as an error line (None: all agree). An offset outside
    the context is a DataError at once."""
    texts, spans, mismatch = [], [], None
    for ans in answers:
        text = _field(ans, "text", str, q_where, path)
        start = _field(ans, "answer_start", int, q_where, path)
        end = start + len(text)
        if start < 0 or end > len(context_text):
            raise DataError(f"{path}: {q_where}: answer_start {start} with answer length {len(text)} "
                            f"lies outside the context ({len(context_text)} chars)")
        if context_text[start:end] != text and mismatch is None:
            mismatch = (f"{path}: {q_where}: answer {text!r} disagrees with its offsets (the context "
                        f"at answer_start {start} reads {context_text[start:end]!r}); expected the "
                        f"answer text at answer_start")
        texts.append(text)
        spans.append(_align(context_text, all_offsets, kept, text, start, end, stats))
    return texts, spans, mismatch


def _align(context: str, offsets: list[tuple[int, int]], kept: int, text: str, start: int, end: int,
           stats: SquadStats) -> tuple[int, int] | None:
    """Token span of the answer over the full context's ``offsets``, counting in ``stats`` the answers that are
    unalignable (text differs at answer_start, or covers no token), cut off (span reaches token ``kept`` or
    beyond), or inexact (token boundaries fall inside the answer's first or last word)."""
    span = char_span_to_tokens(offsets, start, end) if context[start:end] == text else None
    if span is None:
        stats.unalignable += 1
        return None
    if span[1] >= kept:
        stats.lost_to_truncation += 1
        return None
    if offsets[span[0]][0] != start or offsets[span[1]][1] != end:
        stats.inexact += 1
    return span


def read_file(path: str | Path, articles: Sequence[int] | None = None, max_context_tokens: int | None = None,
              mismatched_answers: str = "count") -> tuple[list[Example], SquadStats]:
    """Read an official SQuAD v1.1 file (optionally only articles [first, stop)); ``mismatched_answers`` as in
    :func:`examples_from_squad`."""
    return examples_from_squad(load_json(path), path, articles, max_context_tokens,
                               mismatched_answers=mismatched_answers)


def hub_to_squad(rows: Any) -> dict[str, Any]:
    """Rows of the hub ``squad`` dataset (flat: id, title, context, question, answers{text, answer_start})
    regrouped into the official nested layout, consecutive rows sharing title/context forming one article/paragraph."""
    data: list[dict[str, Any]] = []
    for row in rows:
        if not data or data[-1]["title"] != row["title"]:
            data.append({"title": row["title"], "paragraphs": []})
        paras = data[-1]["paragraphs"]
        if not paras or paras[-1]["context"] != row["context"]:
            paras.append({"context": row["context"], "qas": []})
        answers = [{"text": t, "answer_start": s}
                   for t, s in zip(row["answers"]["text"], row["answers"]["answer_start"])]
        paras[-1]["qas"].append({"id": row["id"], "question": row["question"], "answers": answers})
    return {"data": data, "version": "1.1"}
