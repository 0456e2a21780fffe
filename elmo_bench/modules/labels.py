"""Label inventories shared by the tagging tasks, and the target id that losses ignore.

A label seen in dev or test but never in training must not crash a run after its first epoch: the inventory is
built from the gold of every split, and a label missing from training is logged as a warning (the model can only
learn it from nothing, so its F1 on that label will be 0, which is the honest score).
"""
from __future__ import annotations

import logging
from typing import Iterable, Mapping, Sequence

log = logging.getLogger(__name__)

#: target id at padding and for unusable gold (cross_entropy's ignore_index)
IGNORE = -100


def bio_labels(splits: Mapping[str, Sequence[Mapping]], task: str, field: str = "tags",
               train: str = "train") -> list[str]:
    """``O`` then ``B-X``, ``I-X`` for every type X in the gold of all splits (sorted, so stable across runs).

    Types absent from the ``train`` split are kept and logged once as a warning naming the splits they occur in.
    """
    seen: dict[str, set[str]] = {}
    for split, examples in splits.items():
        for ex in examples:
            for tag in ex.get(field) or ():
                if tag != "O":
                    seen.setdefault(tag[2:], set()).add(split)
    unseen = {kind: sorted(where) for kind, where in seen.items() if train not in where}
    if unseen:
        log.warning("%s: label types %s occur in %s but never in the training data; they are kept in the label "
                    "set (the model cannot learn them, their F1 will be 0)", task, sorted(unseen),
                    sorted({s for where in unseen.values() for s in where}))
    return ["O"] + [f"{p}-{kind}" for kind in sorted(seen) for p in ("B", "I")]


def _as_list(value: object) -> Iterable[str]:
    if value is None:
        return ()
    return value if isinstance(value, (list, tuple)) else (value,)  # type: ignore[return-value]
