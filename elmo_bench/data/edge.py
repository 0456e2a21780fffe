"""Edge-probing examples (Tenney et al. 2019): a sentence and its gold targets, each one or two word spans with one
or more labels, checked once, torch-free.

One example, whatever task or reader made it::

    {"id": str, "tokens": list[str],
     "targets": [{"span1": [start, end), "span2": [start, end) | absent, "labels": [str, ...]}, ...]}

Spans are half-open word intervals, as in jiant's JSON files (``[i, i + 1)`` is word i). A task without a second
span role (POS, chunks, entities) leaves ``span2`` out; a relation (dependencies, SRL, coreference) has both.
Only gold targets are probed: no span is enumerated. ``read_jsonl`` reads jiant's edge-probing JSON lines
(``{"text": "w1 w2 ...", "targets": [{"span1": [s, e], "span2": [s, e], "label": str | [str]}]}``), the format of
the tasks' bundled samples; every reader's examples pass :func:`check_example`, and a file with no target at all
is refused (:func:`check_has_targets`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import open_text

Span = tuple[int, int]


def make_target(span1: Span, labels: Sequence[str], span2: Span | None = None) -> dict[str, Any]:
    """One target: ``span1`` (and ``span2``) half-open word spans, ``labels`` its gold label set."""
    target: dict[str, Any] = {"span1": [int(span1[0]), int(span1[1])], "labels": [str(x) for x in labels]}
    if span2 is not None:
        target["span2"] = [int(span2[0]), int(span2[1])]
    return target


def _check_span(span: Any, length: int, role: str, where: str) -> None:
    ok = (isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(x, int) for x in span))
    if not ok or not 0 <= span[0] < span[1] <= length:
        raise DataError(f"{where}: {role} {span!r} is out of range; expected [start, end) with "
                        f"0 <= start < end <= {length} (the sentence's word count)")


def check_example(example: dict[str, Any], where: str, two_spans: bool) -> None:
    """DataError naming ``where`` (file:line) on a span out of the sentence, a missing or extra second span, or a
    target with an empty label set."""
    length = len(example["tokens"])
    if length == 0:
        raise DataError(f"{where}: a sentence without words; expected at least one word")
    for target in example["targets"]:
        _check_span(target.get("span1"), length, "span1", where)
        if two_spans:
            if "span2" not in target:
                raise DataError(f"{where}: target {target['span1']} has no span2; this task's targets are pairs")
            _check_span(target["span2"], length, "span2", where)
        elif "span2" in target:
            raise DataError(f"{where}: target {target['span1']} has a span2; this task's targets are single spans")
        labels = target.get("labels")
        if not labels or any(not isinstance(x, str) or not x for x in labels):
            raise DataError(f"{where}: target {target['span1']} has an empty label set; expected one or more labels")


def check_has_targets(examples: Sequence[dict[str, Any]], path: str | Path, last_line: int | None = None) -> None:
    """A task file whose sentences hold no target at all is refused (nothing to train or score on)."""
    if not any(ex["targets"] for ex in examples):
        where = f"{path}:{last_line}" if last_line else str(path)
        raise DataError(f"{where}: no edge-probing targets in {len(examples)} sentence(s) read; expected at least "
                        f"one target (a span with its label)")


def _labels(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(x) for x in value]
    raise DataError(f"{where}: 'label' expected a string or a list of strings, found {value!r}")


def _jsonl_example(record: Any, where: str, index: int, split: str) -> dict[str, Any]:
    if not isinstance(record, dict) or not isinstance(record.get("text"), str) \
            or not isinstance(record.get("targets"), list):
        raise DataError(f"{where}: expected a JSON object with 'text' (a string) and 'targets' (a list)")
    targets = []
    for target in record["targets"]:
        if not isinstance(target, dict) or "span1" not in target or "label" not in target:
            raise DataError(f"{where}: every target needs 'span1' and 'label', found {target!r}")
        out = {"span1": target["span1"], "labels": _labels(target["label"], where)}
        if "span2" in target:
            out["span2"] = target["span2"]
        targets.append(out)
    return {"id": str((record.get("info") or {}).get("id") or f"{split}-{index}"),
            "tokens": record["text"].split(), "targets": targets}


def read_jsonl(path: str | Path, split: str, two_spans: bool) -> list[dict[str, Any]]:
    """jiant's edge-probing JSON lines → checked examples; DataError naming the file and line on bad input."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found (expected edge-probing JSON lines: text and targets)")
    examples: list[dict[str, Any]] = []
    lineno = 0
    with open_text(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{where}: not JSON ({exc.msg}); expected one edge-probing record a line") from None
            example = _jsonl_example(record, where, len(examples), split)
            check_example(example, where, two_spans)
            examples.append(example)
    check_has_targets(examples, path, lineno)
    return examples


def target_count(examples: Sequence[dict[str, Any]]) -> int:
    """Targets in ``examples`` (what the counts in the tests and the docs state)."""
    return sum(len(ex["targets"]) for ex in examples)


#: a task's native reader: (data config, split name) → edge examples (targets built, not yet checked)
NativeReader = Callable[[Mapping[str, Any], str], list[dict[str, Any]]]


def first_sentences(examples: Sequence[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """The examples of the first ``limit`` sentences (SRL has one example per predicate: all of a sentence's stay
    together; ``sentence_id`` names the sentence, else ``id``). None: all of them."""
    if not limit:
        return list(examples)
    seen: set[str] = set()
    out = []
    for ex in examples:
        key = str(ex.get("sentence_id", ex["id"]))
        if key not in seen and len(seen) == int(limit):
            break
        seen.add(key)
        out.append(ex)
    return out


def read_edge_splits(data_cfg: Mapping[str, Any], native: NativeReader, two_spans: bool) -> dict[str, list]:
    """Every split the data config names (train/dev/test), read by ``native`` or, with ``format: jsonl``, as jiant's
    JSON lines; each example checked (a native reader's position is ``file: sentence N``), each file holding at
    least one target; ``max_train_sentences`` keeps the first N training sentences."""
    out: dict[str, list] = {}
    for split in ("train", "dev", "test"):
        where = data_cfg.get(split)
        if not where:
            continue
        if data_cfg.get("format") == "jsonl":
            examples = read_jsonl(where, split, two_spans)
        else:
            examples = native(data_cfg, split)
            for i, example in enumerate(examples, start=1):
                check_example(example, f"{example.get('where') or where}: sentence {i}", two_spans)
            check_has_targets(examples, where)
        out[split] = examples
    if "train" in out:
        out["train"] = first_sentences(out["train"], data_cfg.get("max_train_sentences"))
    return out
