"""lm_adaptation.json (Table 7's input): written and read back, bad records named with their field."""
from __future__ import annotations

import json

import pytest

from elmo_bench.records import lm_adaptation
from elmo_bench.report.tables import table7
from tests.declared_numbers import numbers
from tests.report_sections import collect_with_probes as collect


def test_round_trip_and_table7(tmp_path):
    path = tmp_path / "sst" / lm_adaptation.FILENAME
    path.parent.mkdir()
    lm_adaptation.write(path, "sst", "sst", "dev", 1234, {"forward": 300.0, "backward": 280.0, "average": 290.0},
                        {"forward": 150.0, "backward": 140.0, "average": 145.0}, "base", "adapted", {"epochs": 1})
    record = lm_adaptation.read(path)
    assert record["schema"] == lm_adaptation.SCHEMA and record["after"]["average"] == 145.0
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / lm_adaptation.FILENAME).write_text(json.dumps({**record, "after": {"average": -1}}))
    found = collect([tmp_path])
    assert len(found.adaptations) == 1 and any("'after'" in w for w in found.warnings)
    table = table7(found.adaptations, numbers())
    sst = next(r for r in table.rows if r[0] == "sst")
    assert sst == ["sst", "sst", "dev", "290.0", "145.0", "1", "SST", "131.5", "78.6"]
    assert next(r for r in table.records if r["task"] == "sst")["paper"] == {"data": "SST", "before": 131.5, "after": 78.6}


def test_seeds_of_one_task_are_one_row(tmp_path):
    """Three seeds' adapted biLMs of one task: one Table 7 row, "after" as mean ± sample std, n 3 (hand-computed:
    mean of 180, 190, 200 is 190, sample std 10)."""
    for seed, after in ((1, 180.0), (2, 190.0), (3, 200.0)):
        path = tmp_path / f"seed{seed}" / lm_adaptation.FILENAME
        path.parent.mkdir()
        lm_adaptation.write(path, "ner", "conll2003", "dev", 100, {"forward": 330.0, "backward": 322.0, "average": 326.0},
                            {"forward": after, "backward": after, "average": after}, "base", f"adapted{seed}",
                            {"epochs": 1})
    table = table7(collect([tmp_path]).adaptations, numbers())
    ner = [r for r in table.rows if r[0] == "ner"]
    assert ner == [["ner", "conll2003", "dev", "326.0", "190.0 ± 10.0", "3", "CoNLL-2003", "103.2", "46.3"]]
    record = next(r for r in table.records if r["task"] == "ner")
    assert record["after"] == 190.0 and record["after_std"] == 10.0 and record["n"] == 3


def test_wrong_schema_is_refused(tmp_path):
    path = tmp_path / lm_adaptation.FILENAME
    path.write_text(json.dumps({"schema": "other", "task": "ner"}))
    with pytest.raises(ValueError, match="expected schema 'elmo_bench.lm_adaptation/1'"):
        lm_adaptation.read(path)
