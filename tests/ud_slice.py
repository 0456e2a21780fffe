"""The first sentences of each real UD English-EWT split written as a probe's data directory: a probe run through
the door on a few hundred real sentences instead of encoding all of EWT's dev and test (4,078 sentences) per run."""
from __future__ import annotations

import gzip
from pathlib import Path

from tests.conftest import DATA

EWT = DATA / "pos" / "ud_english_ewt"


def ewt_slice(root: Path, counts: dict[str, int], name: str = "ewt_slice") -> Path:
    """``root/name`` holding ``en_ewt-ud-<split>.conllu`` with the first ``counts[split]`` sentences of each split."""
    out = root / name
    out.mkdir(parents=True)
    for split, count in counts.items():
        found = [p for p in (EWT / f"en_ewt-ud-{split}.conllu", EWT / f"en_ewt-ud-{split}.conllu.gz") if p.exists()]
        opener = gzip.open if found[0].suffix == ".gz" else open
        with opener(found[0], "rt", encoding="utf-8") as handle:
            blocks = handle.read().split("\n\n")
        (out / f"en_ewt-ud-{split}.conllu").write_text("\n\n".join(blocks[:count]) + "\n\n", encoding="utf-8")
    return out
