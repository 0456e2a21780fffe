"""RunRecord (elmo_bench/records/run_record.py), the one schema of results.json: every committed record reads back to the
very same JSON, unknown keys and the encoder identity travel through, and a malformed file is refused by name."""
from __future__ import annotations

import json

import pytest

from elmo_bench.records.run_record import REQUIRED_KEYS, RunRecord
from tests.conftest import REPO

COMMITTED = sorted((REPO / "docs" / "results").rglob("results.json"))


def test_every_committed_results_json_reads_back_unchanged():
    assert len(COMMITTED) >= 100
    tasks = set()
    for path in COMMITTED:
        original = json.loads(path.read_text())
        record = RunRecord.read(path)
        assert record.to_dict() == original, path
        tasks.add(record.task)
    assert {"ner", "srl", "squad", "snli", "coref", "sst", "wsd", "pos_probe"} <= tasks   # engine and both probes


def test_write_sorts_keys_and_keeps_unknown_keys_and_the_encoder(tmp_path):
    record = RunRecord.from_dict({"task": "ner", "metrics": {"test": {"f1": 90.0}}, "seed": 2,
                                  "encoder": {"kind": "bilm", "hash": "abc"}, "later_key": [1, 2]}, required=())
    assert record.extra == {"later_key": [1, 2]} and record.encoder == {"kind": "bilm", "hash": "abc"}
    record.write(tmp_path / "results.json")
    text = (tmp_path / "results.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    saved = json.loads(text)
    assert saved["later_key"] == [1, 2] and saved["encoder"]["hash"] == "abc"
    assert "history" not in saved and "device" not in saved and "views" not in saved     # unset optional keys
    assert set(REQUIRED_KEYS) <= set(saved) and saved["elmo"] is None                     # required ones always


def test_malformed_records_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"task": "ner", "metrics": {}}))
    with pytest.raises(ValueError, match=r"results.json: not a results.json of this project \(missing keys"):
        RunRecord.read(path)
    full = {key: {} for key in REQUIRED_KEYS}
    path.write_text(json.dumps({**full, "task": "ner", "config": [1]}))
    with pytest.raises(ValueError, match=r"results.json: bad field \(config is list, expected an object\)"):
        RunRecord.read(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="results.json: unreadable"):
        RunRecord.read(path)
