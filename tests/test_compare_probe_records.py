"""scripts/compare_probe_records.py (issue 44, item 6's check): values compared exactly, key by key, on hand-made
records; differing and one-sided keys named; directories paired by their records' paths; exit codes."""
from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("compare_probe_records", REPO / "scripts" / "compare_probe_records.py")
cmp = importlib.util.module_from_spec(spec)
sys.modules["compare_probe_records"] = cmp
spec.loader.exec_module(cmp)

COMMITTED = {"dev": {"linear/layer_0_accuracy": 79.56813934067682, "mlp1/layer_0_accuracy": 81.93422674672924,
                     "most_frequent_tag_accuracy": 78.76088599037658},
             "test": {"linear/layer_0_accuracy": 78.84753327488643, "mlp1/layer_0_accuracy": 81.62508966286762}}


def rerun(**changes: float) -> dict:
    out = json.loads(json.dumps(COMMITTED))
    for dotted, value in changes.items():
        split, key = dotted.split("__")
        out[split][key] = value
    return out


def test_flatten_names_every_leaf_by_its_dotted_path():
    assert cmp.flatten({"dev": {"a": 1.0, "b": {"c": 2}}, "l": [3, {"d": 4}]}) == \
        {"dev.a": 1.0, "dev.b.c": 2, "l.0": 3, "l.1.d": 4}


def test_identical_records_count_every_value():
    result = cmp.compare(COMMITTED, rerun())
    assert result.same and len(result.identical) == 5 and result.different == []


def test_a_last_digit_difference_is_a_difference():
    result = cmp.compare(COMMITTED, rerun(**{"dev__mlp1/layer_0_accuracy": 81.93422674672925}))
    assert not result.same
    assert result.different == [("dev.mlp1/layer_0_accuracy", 81.93422674672924, 81.93422674672925)]
    assert len(result.identical) == 4


def test_keys_on_one_side_are_named_and_make_the_records_differ():
    other = rerun()
    del other["test"]["mlp1/layer_0_accuracy"]
    other["test"]["mlp2/layer_0_accuracy"] = 80.0
    result = cmp.compare(COMMITTED, other)
    assert result.only_a == ["test.mlp1/layer_0_accuracy"] and result.only_b == ["test.mlp2/layer_0_accuracy"]
    assert not result.same and len(result.identical) == 4


def test_nan_equals_nan_but_a_bool_is_not_a_number():
    assert cmp.equal(float("nan"), float("nan")) and cmp.equal(1.0, 1) and not cmp.equal(True, 1)
    assert not cmp.equal(float("nan"), 0.0)


def write(path, metrics):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"metrics": metrics, "probes": {"x": [{"dev_loss": 1.5}]}}))


def test_directories_pair_records_by_path_and_exit_1_on_a_difference(tmp_path, capsys):
    write(tmp_path / "a/pos/results.json", COMMITTED)
    write(tmp_path / "a/mdl/results.json", {"train": {"layer_0_online_bits": 33003.5}})
    write(tmp_path / "b/pos/results.json", rerun(**{"test__linear/layer_0_accuracy": 78.8}))
    write(tmp_path / "b/mdl/results.json", {"train": {"layer_0_online_bits": 33003.5}})
    assert cmp.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "mdl/results.json: 1 identical, 0 different"
    assert out[1] == "pos/results.json: 4 identical, 1 different"
    assert out[2] == "  differs test.linear/layer_0_accuracy: 78.84753327488643 vs 78.8"


def test_identical_files_exit_0_and_another_block_is_compared_on_request(tmp_path, capsys):
    write(tmp_path / "a.json", COMMITTED)
    write(tmp_path / "b.json", COMMITTED)
    assert cmp.main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    assert cmp.main([str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--block", "probes"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{tmp_path / 'a.json'}: 1 identical, 0 different"


def test_a_record_missing_in_b_or_bad_input_is_reported(tmp_path, capsys):
    write(tmp_path / "a/pos/results.json", COMMITTED)
    (tmp_path / "b").mkdir()
    assert cmp.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    assert capsys.readouterr().out.strip() == "pos/results.json: missing in B"
    (tmp_path / "bad.json").write_text("{trunc")
    with pytest.raises(SystemExit, match="expected a readable JSON record"):
        cmp.main([str(tmp_path / "a/pos/results.json"), str(tmp_path / "bad.json")])
    with pytest.raises(SystemExit, match="expected a top-level 'nothing' block"):
        cmp.main([str(tmp_path / "a/pos/results.json"), str(tmp_path / "a/pos/results.json"), "--block", "nothing"])
    with pytest.raises(SystemExit, match="expected two results.json files or two directories"):
        cmp.main([str(tmp_path / "a"), str(tmp_path / "bad.json")])
