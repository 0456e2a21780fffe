"""Where in training a checkpoint was taken (issue 57 item 3): read from the files beside the weights a run names, so
that a probe record of a checkpoint series can be put on a "by training step" axis. Kind-neutral: the weights are
what each encoder kind's ``checkpoint`` hook names (else a local ``encoder.path``), and the position comes from
files any kind's checkpoint can have beside it.

What is readable, first found wins:

1. ``checkpoint.json`` in the checkpoint's directory (a weights file's folder, or the model directory itself):
   ``{"step": N, "tokens_seen": T}``. ``elmo-bench pretrain ... pretrain.series_dir=DIR`` writes it in every
   series point; a user can write one beside any checkpoint, a Hugging Face revision included;
2. a Hugging Face Trainer's ``trainer_state.json`` in that directory: ``global_step``, and
   ``num_input_tokens_seen`` when the Trainer counted tokens (else the tokens seen are unknown);
3. the name of the weights file or its directory: ``step1000``, ``step-1000``, ``step_1000``, ``checkpoint-1000``,
   ``global_step1000`` (Pythia's revisions, the Trainer's folders), and ``tokens-T`` beside it when present.

The series a checkpoint belongs to is named by the directory holding the checkpoint's directory (``DIR`` of a
pretraining series, the folder holding a model's revisions).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping

from elmo_bench.encoders.kinds import kind_of
from elmo_bench.encoders.settings import path_like

#: the file that marks a finished series point and says where in training it was taken
POINT_FILE = "checkpoint.json"
#: a Hugging Face Trainer's record of its progress, saved in each checkpoint-<step> folder
TRAINER_STATE = "trainer_state.json"
#: a step in a checkpoint's name (``step1000``, ``step-00000400_tokens-1638400``, ``checkpoint-1000``)
STEP_NAME = re.compile(r"(?:^|[^a-z])(?:global_step|step|checkpoint)[-_]?(\d+)", re.IGNORECASE)
TOKENS_NAME = re.compile(r"(?:^|[^a-z])tokens[-_]?(\d+)", re.IGNORECASE)


def checkpoint_path(root: Mapping[str, Any]) -> Path | None:
    """The file or directory holding a job's weights (the kind's ``checkpoint`` hook, else a local
    ``encoder.path``), when it is on this machine (a hub name: None). ``root``: the resolved config."""
    spec = root.get("encoder") or {}
    kind = kind_of(spec)
    if kind.checkpoint is not None:
        value = kind.checkpoint(root)
    else:
        value = spec.get("path") if spec.get("path") and path_like(str(spec.get("path"))) else None
    path = Path(str(value)).expanduser() if value else None
    return path if path is not None and path.exists() else None


def _whole(value: Any) -> int | None:
    """A non-negative integer from a JSON value (None: absent or not one)."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _from_files(folder: Path) -> dict[str, Any] | None:
    """checkpoint.json, else trainer_state.json, of ``folder``; None without either (or unreadable)."""
    for name, step_key, tokens_key in ((POINT_FILE, "step", "tokens_seen"),
                                       (TRAINER_STATE, "global_step", "num_input_tokens_seen")):
        path = folder / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        step = _whole(data.get(step_key)) if isinstance(data, dict) else None
        if step is not None:
            tokens = _whole(data.get(tokens_key))
            return {"step": step, "tokens_seen": tokens or None, "from": name}
    return None


def _from_name(path: Path) -> dict[str, Any] | None:
    """The step (and tokens) a checkpoint's file or folder name says; None when neither says one."""
    for name in (path.stem if path.is_file() else path.name, path.parent.name if path.is_file() else ""):
        step = STEP_NAME.search(name)
        if step is not None:
            tokens = TOKENS_NAME.search(name)
            return {"step": int(step.group(1)), "tokens_seen": int(tokens.group(1)) if tokens else None,
                    "from": "name"}
    return None


def position(path: Path) -> dict[str, Any] | None:
    """Where in training the checkpoint at ``path`` (a weights file or a model directory) was taken:
    ``{"series", "step", "tokens_seen" (None: unknown), "from"}``, or None when nothing says (see the module
    docstring)."""
    folder = path if path.is_dir() else path.parent
    found = _from_files(folder) or _from_name(path)
    if found is None:
        return None
    return {"series": folder.resolve().parent.name, **found}


def run_position(root: Mapping[str, Any]) -> dict[str, Any] | None:
    """:func:`position` of a run's checkpoint (None: no local checkpoint, or nothing says where it was taken)."""
    path = checkpoint_path(root)
    return None if path is None else position(path)
