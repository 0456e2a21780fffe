"""lm_adaptation.json (Table 7's input): written and read back, bad records named with their field."""
from __future__ import annotations

import json

import pytest

from elmo_bench import lm_adaptation
from elmo_bench.report.collect import collect
from elmo_bench.report.tables import table7


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
    table = table7(found.adaptations)
    sst = next(r for r in table.rows if r[0] == "sst")
    assert sst == ["sst", "sst", "dev", "290.0", "145.0", "SST", "131.5", "78.6"]
    assert next(r for r in table.records if r["task"] == "sst")["paper"] == {"data": "SST", "before": 131.5, "after": 78.6}


def test_wrong_schema_is_refused(tmp_path):
    path = tmp_path / lm_adaptation.FILENAME
    path.write_text(json.dumps({"schema": "other", "task": "ner"}))
    with pytest.raises(ValueError, match="expected schema 'elmo_bench.lm_adaptation/1'"):
        lm_adaptation.read(path)
