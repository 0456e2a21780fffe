"""CoNLL-2003 reader: the four-column files (``word POS chunk NER``, read by elmo_bench.data.conll2003: IOB1 →
BIO) or the hub dataset ``conll2003``."""
from __future__ import annotations

from typing import Any, Mapping

from elmo_bench.base.errors import DataError
from elmo_bench.data.conll2003 import check_tag, iob1_to_bio, read_conll
from elmo_bench.data.splits import read_splits as shared_read_splits
from elmo_bench.tasks.api import Example


def hub_records_to_examples(ds: Any, name: str) -> list[Example]:
    """Examples from one split of the hub dataset ``conll2003`` (``tokens`` and ``pos_tags`` / ``chunk_tags`` /
    ``ner_tags`` as ClassLabel ids, names on the features): the same fields as ``read_conll``.

    The hub's tags are already IOB2; ``iob1_to_bio`` leaves them unchanged. Like ``read_conll``, the hub skips the
    ``-DOCSTART-`` lines, so the i-th example of a split is the i-th sentence of the official file.
    """
    names = {key: ds.features[key].feature.names for key in ("pos_tags", "chunk_tags", "ner_tags")
             if key in ds.features}
    if "ner_tags" not in names or "tokens" not in ds.features:
        raise DataError(f"hub split {name}: expected columns 'tokens' and 'ner_tags'; columns are {sorted(ds.features)}")
    examples: list[Example] = []
    for i, record in enumerate(ds):
        tags = [names["ner_tags"][t] for t in record["ner_tags"]]
        for tag in tags:
            if not check_tag(tag):
                raise DataError(f"hub split {name} record {i}: bad NER tag {tag!r} (expected O, B-TYPE or I-TYPE)")
        example: Example = {"id": f"{name}-{i}", "tokens": list(record["tokens"])}
        for key, field in (("pos_tags", "pos_tags"), ("chunk_tags", "chunk")):
            if key in names:
                example[field] = [names[key][t] for t in record[key]]
        example["tags"] = iob1_to_bio(tags)
        examples.append(example)
    return examples


def read_splits(data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
    """Every split named in ``data_cfg`` (train/dev/test; a missing or null one is absent)."""
    return shared_read_splits(data_cfg, read_conll, hub_records_to_examples)
