"""``lm_adaptation.json``: the record a task-adapted biLM step (``finetune-lm`` on a task's training text, paper
section 3.4) leaves for the report's Table 7. One JSON object:

```json
{"schema": "elmo_bench.lm_adaptation/1",
 "task": "ner", "data": "conll2003",          # the task (registry name) and data config whose text was used
 "text": "dev",                                # the text the perplexities are measured on (never the training text)
 "tokens": 51362,                              # tokens in that text
 "before": {"forward": 560.1, "backward": 546.7, "average": 553.4},   # base biLM
 "after":  {"forward": 231.0, "backward": 225.6, "average": 228.3},   # after fine-tuning
 "base_bilm": "a300251a45b83d5b", "adapted_bilm": "…",               # bilm_identity hashes
 "recipe": {"epochs": 1, "...": "..."}}        # optional: how the adapted biLM was trained
```

``average`` is the mean of the two directions' perplexities (what ``elmo-bench perplexity`` prints as ``average``).
The report reads every ``lm_adaptation.json`` below its input directories.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.atomic import atomic_write_text

SCHEMA = "elmo_bench.lm_adaptation/1"
FILENAME = "lm_adaptation.json"
DIRECTIONS = ("forward", "backward", "average")


def validate(record: Mapping[str, Any], where: str = FILENAME) -> dict[str, Any]:
    """The record as a dict; ValueError naming ``where`` and the bad field otherwise."""
    if not isinstance(record, Mapping):
        raise ValueError(f"{where}: expected a JSON object")
    if record.get("schema") != SCHEMA:
        raise ValueError(f"{where}: expected schema {SCHEMA!r}, found {record.get('schema')!r}")
    for key in ("task", "text"):
        if not isinstance(record.get(key), str) or not record[key]:
            raise ValueError(f"{where}: field {key!r} must be a non-empty string")
    for when in ("before", "after"):
        values = record.get(when)
        if not isinstance(values, Mapping) or not isinstance(values.get("average"), (int, float)) \
                or values["average"] <= 0:
            raise ValueError(f"{where}: field {when!r} must hold a positive 'average' perplexity")
    return dict(record)


def write(path: str | Path, task: str, data: str, text: str, tokens: int, before: Mapping[str, float],
          after: Mapping[str, float], base_bilm: str, adapted_bilm: str, recipe: Mapping[str, Any] | None = None) -> None:
    """Write (atomically) one record; ``before``/``after`` as printed by ``elmo-bench perplexity``."""
    record = {"schema": SCHEMA, "task": task, "data": data, "text": text, "tokens": int(tokens),
              "before": {k: float(before[k]) for k in DIRECTIONS if k in before},
              "after": {k: float(after[k]) for k in DIRECTIONS if k in after},
              "base_bilm": base_bilm, "adapted_bilm": adapted_bilm, "recipe": dict(recipe or {})}
    validate(record, str(path))
    atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True) + "\n")


def read(path: str | Path) -> dict[str, Any]:
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: unreadable ({exc.__class__.__name__}: {exc})") from exc
    return validate(record, str(path))
