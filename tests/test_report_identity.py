"""Issue 54, the report's part: records are seeds of one experiment exactly when their identities (the canonical
form resume compares, elmo_bench.identity.rules) are equal once the seed is left out. Different experiments are row
blocks apart, labelled in words; records of one run (equal identity, equal seed) are duplicates: identical ones
counted once, disagreeing ones one line each and left out, never averaged and never refusing the report.

The records are written as ``python run.py probe=<name>`` writes them (the probe's name and settings, the data
fingerprints, the resolved config, the encoder's identity), each case changing one thing."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

from elmo_bench.commands.report import build_report
from elmo_bench.records.run_record import RunRecord
from elmo_bench.report import unshown
from tests.report_sections import probe_report

structural_mdl_table = probe_report("structural").structural_mdl_table
from tests.report_sections import collect_with_probes as collect
from tests.report_sections import plugins, probe_report

table6 = probe_report("pos").table6
from elmo_bench.report.tables import table1

BILM = {"kind": "bilm", "hash": "abcdef0123456789", "layers": 3, "dim": 256}
MINILM = {"kind": "transformers", "hash": "181a732f47ddd4bd", "model": "all-MiniLM-L6-v2", "model_type": "bert",
          "pooling": "first", "layers": 7, "dim": 384, "dtype": "float32"}
LLAMA = {"kind": "transformers", "hash": "0123abcd0123abcd", "model": "tiny-llama", "model_type": "llama",
         "pooling": "last", "layers": 3, "dim": 64, "dtype": "float32"}
POS_SETTINGS = {"tags": "upos", "max_train_sentences": 2000, "max_dev_sentences": None, "control": False,
                "data_dir": None, "l2_grid": [0.001, 0.01]}
STRUCTURAL_SETTINGS = {"punct": "xpos", "rank": None, "max_train_sentences": 2000, "max_epochs": 10,
                       "data_dir": None}
FINGERPRINT = {"data.data_dir": "dir:b48d3d4c8d6157df"}


def probe_record(path: Path, name: str, task: str, metrics: dict[str, dict[str, float]], *, seed: int = 1,
                 settings: dict[str, Any] | None = None, encoder: dict[str, Any] = BILM, cache: bool = True,
                 fingerprint: dict[str, str] = FINGERPRINT, sentences: int = 2000) -> None:
    """A probe run's results.json as elmo_bench.engine.probe_run writes it."""
    settings = dict(settings or {})
    config = {"amp": "off", "cache": cache, "seed": seed, "max_segment": 256, "threads": 1, "progress": False,
              "probe": {"name": name, **settings}, "encoder": {"kind": encoder["kind"], "path": None},
              "paths": {"cache_dir": ".cache/activations", "results_dir": "results"}}
    bilm = {"name": "shipped", "hash": encoder["hash"], "layers": 3, "dim": 256} if encoder is BILM else None
    path.mkdir(parents=True, exist_ok=True)
    RunRecord(task=task, embedder="elmo", seed=seed, config=config, metrics=metrics, main_metric="",
              data={"name": "ud_ewt", "fraction": 1.0, "train_sentences": sentences}, mixes={}, elmo=None,
              epochs={"run": 0, "best": None, "history": []}, bilm=bilm, encoder=encoder,
              extra={"probe": {"name": name, "settings": settings}, "data_fingerprint": fingerprint,
                     "printed": {"test": metrics.get("test", {})}}).write(path / "results.json")


def pos(value: float, mft: float = 72.0) -> dict[str, dict[str, float]]:
    return {"test": {"layer_0_accuracy": value, "layer_1_accuracy": value + 10, "most_frequent_tag_accuracy": mft}}


def uuas(value: float) -> dict[str, dict[str, float]]:
    return {"test": {f"layer_{k}_uuas": value for k in range(3)}}


def _table6_rows(root: Path) -> dict[str, list[str]]:
    return {row[0]: row for row in table6(collect([root]).runs).rows if "converged" in row[0]}


def test_xpos_and_upos_pos_probes_are_two_labelled_rows_never_one_mean(tmp_path):
    probe_record(tmp_path / "u", "pos", "pos_probe", pos(30.0, 80.0), settings=POS_SETTINGS)
    probe_record(tmp_path / "x", "pos", "pos_probe", pos(38.0, 65.0), settings={**POS_SETTINGS, "tags": "xpos"})
    rows = _table6_rows(tmp_path)
    assert sorted(rows) == ["ud_ewt (2000 train sentences; tags upos), converged probe",
                            "ud_ewt (2000 train sentences; tags xpos), converged probe"]
    assert rows["ud_ewt (2000 train sentences; tags xpos), converged probe"][1] == "38.00"
    assert not any("±" in cell for row in rows.values() for cell in row)           # was "33.95 ± 1.02"


def test_dev_sentence_caps_and_the_control_task_are_experiments_apart_not_seeds(tmp_path):
    probe_record(tmp_path / "all", "pos", "pos_probe", pos(30.0), settings=POS_SETTINGS)
    probe_record(tmp_path / "five", "pos", "pos_probe", pos(31.0), seed=2,
                 settings={**POS_SETTINGS, "max_dev_sentences": 5})
    probe_record(tmp_path / "control", "pos", "pos_probe", pos(12.0), seed=3, settings={**POS_SETTINGS, "control": True})
    rows = _table6_rows(tmp_path)
    assert len(rows) == 3 and not any("±" in cell for row in rows.values() for cell in row)
    labels = " | ".join(sorted(rows))
    assert "control true" in labels and "max_dev_sentences 5" in labels and "max_dev_sentences null" in labels


def _structural_blocks(root: Path) -> dict[str, str]:
    """block label → layer 0's UUAS."""
    return {row[1]: row[3] for row in structural_mdl_table(collect([root]).runs).rows
            if row[0].startswith("ELMo") and row[2] == "layer_0"}


def test_structural_probes_of_other_punctuation_rank_or_test_sentences_are_blocks_apart(tmp_path):
    probe_record(tmp_path / "xpos", "structural", "structural_probe", uuas(12.77), settings=STRUCTURAL_SETTINGS)
    probe_record(tmp_path / "upos", "structural", "structural_probe", uuas(16.37), seed=2,
                 settings={**STRUCTURAL_SETTINGS, "punct": "upos"})
    assert _structural_blocks(tmp_path) == {"trained, punct upos": "16.37", "trained, punct xpos": "12.77"}
    shutil.rmtree(tmp_path / "upos")
    probe_record(tmp_path / "rank8", "structural", "structural_probe", uuas(20.0), seed=2,
                 settings={**STRUCTURAL_SETTINGS, "rank": 8})
    assert _structural_blocks(tmp_path) == {"trained, rank 8": "20.00", "trained, rank null": "12.77"}
    shutil.rmtree(tmp_path / "rank8")
    probe_record(tmp_path / "other_data", "structural", "structural_probe", uuas(16.37), seed=2,
                 settings=STRUCTURAL_SETTINGS, fingerprint={"data.data_dir": "dir:0000000000000000"})
    blocks = _structural_blocks(tmp_path)
    assert sorted(blocks.values()) == ["12.77", "16.37"]                            # was "14.57 ± 2.55"
    assert all("data.data_dir dir:" in label for label in blocks)


def test_three_disagreeing_copies_of_one_seed_are_left_out_and_said_never_averaged(tmp_path):
    for name, value in (("a", 12.77), ("b", 77.7), ("c", 55.5)):
        probe_record(tmp_path / name, "structural", "structural_probe", uuas(value), settings=STRUCTURAL_SETTINGS)
    found = collect([tmp_path])
    assert found.runs == [] and found.duplicates == 0 and len(found.disagreeing) == 1
    assert [p.parent.name for p in found.disagreeing[0].paths] == ["a", "b", "c"]
    assert found.disagreeing[0].where == "metrics.test.layer_0_uuas: 12.77 vs 77.7"
    assert sum("disagree" in w for w in found.warnings) == 1                        # one line


def test_one_run_with_and_without_the_cache_is_one_run_counted_once(tmp_path):
    probe_record(tmp_path / "cached", "pos", "pos_probe", pos(30.0), settings=POS_SETTINGS, cache=True)
    probe_record(tmp_path / "direct", "pos", "pos_probe", pos(30.0), settings=POS_SETTINGS, cache=False)
    found = collect([tmp_path])
    assert len(found.runs) == 1 and found.duplicates == 1                            # was two seeds, "± 0.00"


def test_ridge_records_of_three_encoders_and_two_sizes_are_never_a_task_row_and_never_refused(tmp_path):
    ridge = {"ridge_grid": [0.001], "stream": True, "batch_tokens": 4096, "max_train_sentences": 600}
    accuracy = {"test": {"layer_0_accuracy": 50.0, "most_frequent_tag_accuracy": 30.0}}
    for encoder, name in ((BILM, "bilm"), (MINILM, "minilm"), (LLAMA, "llama")):
        probe_record(tmp_path / name, "ridge", "ridge_probe", accuracy, settings=ridge, encoder=encoder, sentences=600)
    probe_record(tmp_path / "small", "ridge", "ridge_probe", {"test": {"layer_0_accuracy": 40.0}}, sentences=200,
                 settings={**ridge, "max_train_sentences": 200})
    found = collect([tmp_path])
    assert len(found.runs) == 4 and not found.disagreeing                        # four experiments, no refusal
    assert all(row[0] != "ridge_probe" for row in table1(found.runs).rows)       # was a "Baseline" row, 58.49 ± 17.32
    shown, unclaimed = unshown.split_unclaimed(found.runs, plugins())
    assert len(shown) == 4 and unclaimed == []                   # issue 55: probe ridge declares its own section
    report = build_report([str(tmp_path)], tmp_path / "out", "json", significance=False)
    data = json.loads(report.read_text())
    assert "unshown" not in data and "probe=ridge runs (own section): 4." in data["summary"]
    rows = data["tables"]["ridge"]["rows"]                        # one row per encoder and training size
    assert len(rows) == 4 and sorted(r["layer_0"]["mean"] for r in rows) == [40.0, 50.0, 50.0, 50.0]
    assert all(row["task"] != "ridge_probe" for row in data["tables"]["table1"]["rows"])


def test_the_same_records_under_shuffled_directory_names_give_the_same_tables(tmp_path):
    cases = [("pos", "pos_probe", pos(30.0 + i), {**POS_SETTINGS, "tags": tags}, seed)
             for i, (tags, seed) in enumerate((("upos", 1), ("upos", 2), ("xpos", 1), ("xpos", 2)))]
    cases += [("structural", "structural_probe", uuas(10.0 + i), {**STRUCTURAL_SETTINGS, "punct": punct}, seed)
              for i, (punct, seed) in enumerate((("xpos", 1), ("upos", 1), ("xpos", 2)))]
    tables = []
    for order in (list(range(len(cases))), random.Random(0).sample(range(len(cases)), len(cases))):
        root = tmp_path / f"order{len(tables)}"
        for slot, index in enumerate(order):
            name, task, metrics, settings, seed = cases[index]
            probe_record(root / f"run{slot:02d}", name, task, metrics, settings=settings, seed=seed)
        runs = collect([root]).runs
        tables.append(json.dumps([table6(runs).rows, structural_mdl_table(runs).rows], ensure_ascii=False))
    assert tables[0] == tables[1]
    assert "31.00 ± 1.41" not in tables[0] and "30.50 ± 0.71" in tables[0]       # upos seeds 1, 2 (30, 31)
