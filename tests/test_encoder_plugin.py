"""Issue 55 item 5: adding an encoder kind is one module and no edit anywhere else (docs/adding-an-encoder.md).

The hdf5 kind's module is copied into a temporary folder on ``elmo_bench.encoders``' package path (as if under
elmo_bench/encoders/), its declared name changed and nothing else. The scan finds it, ``encoder=<name>`` composes
(its option generated from the declaration), a tiny NER run reads its layers, ``elmo-bench plan`` prices it, and the
report reads the run back under the copy's name.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, needs_fixtures
from tests.test_encoder_hdf5_cli import _embed, sample_sentences

SOURCE = "hdf5"
NEW = "user55_layers"


@pytest.fixture
def copied_kind(tmp_path, monkeypatch):
    """The hdf5 kind's module copied as ``user55_layers`` onto the package's path, its declared name the one change;
    the scan, the sweep's option keys and the ConfigStore option are cleared afterwards."""
    import elmo_bench.encoders as encoders_package
    from elmo_bench.encoders import kinds
    from elmo_bench.engine import encoder_sweep

    root = tmp_path / "user_encoders"
    root.mkdir()
    text = (Path(encoders_package.__path__[0]) / f"{SOURCE}.py").read_text(encoding="utf-8")
    renamed = text.replace(f'NAME = "{SOURCE}"', f'NAME = "{NEW}"')
    assert renamed != text and renamed.count(NEW) == 1                      # the one change: the kind's name
    (root / f"{NEW}.py").write_text(renamed, encoding="utf-8")
    monkeypatch.setattr(encoders_package, "__path__", [*encoders_package.__path__, str(root)])
    kinds.encoder_kinds.cache_clear()
    encoder_sweep.option_keys.cache_clear()
    yield
    kinds.encoder_kinds.cache_clear()
    encoder_sweep.option_keys.cache_clear()
    _forget_option()
    sys.modules.pop(f"elmo_bench.encoders.{NEW}", None)


def _forget_option() -> None:
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().repo.get("encoder", {}).pop(f"{NEW}.yaml", None)


@needs_fixtures
def test_a_copied_kind_module_runs_plans_and_reports(copied_kind, tmp_path, capsys):
    from elmo_bench.commands.main import main
    from elmo_bench.encoders.kinds import encoder_kinds
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.config_schema import register_schemas
    from elmo_bench.engine.experiment import run_experiment
    from elmo_bench.report.collect import collect
    from elmo_bench.report.encoder_names import EncoderNames
    from tests.test_engine import _cfg

    assert {SOURCE, NEW} <= set(encoder_kinds())
    register_schemas()                                                        # the copy's encoder=<name> option
    layers = _embed(tmp_path, sample_sentences(), "--options", str(FIXTURES / "options.json"), "--weights",
                    str(FIXTURES / "lm_weights.hdf5"))
    chosen = ["embedder=glove_elmo", f"encoder={NEW}", f"encoder.path={layers}"]
    run_dir = tmp_path / "results" / "runs" / "ner" / NEW
    saved = run_experiment(run_config(_cfg(tmp_path, "trainer.max_epochs=1", *chosen)), run_dir)
    assert saved["encoder"]["kind"] == NEW and saved["encoder"]["layers"] == 3
    assert saved["plugins"]["encoder"] == f"{NEW}@1"
    identity = json.loads((run_dir / "run.json").read_text())["identity"]
    assert identity["encoder.plugin"] == f"{NEW}@1" and identity["encoder.kind"] == NEW

    capsys.readouterr()
    assert main(["plan", "task=ner", "data=ner_sample", *chosen, "--format", "json", "--sample-batches", "1"]) == 0
    planned = json.loads(capsys.readouterr().out)["runs"][0]
    assert planned["encoder_flops"] == 0 and planned["cache_bytes"] == layers.stat().st_size   # the copy's price
    assert planned["bilm"] is None

    runs = collect([tmp_path / "results"]).runs
    names = EncoderNames(runs)
    assert [names.label(run.encoder_key) for run in runs] == [f"{NEW} {layers.name}"]   # named as hdf5's are
    assert "encoder_label" not in saved                                        # (hdf5 declares no label of its own)


def test_a_declared_label_is_recorded_and_the_report_shows_it():
    """A kind's ``label`` reaches the report through results.json (the report imports no kind); a record that
    names no kind is read as the biLM's (identity/history.py), the kind that declares itself the default."""
    from elmo_bench.encoders.kinds import default_kind, label_record
    from elmo_bench.identity.history import LEGACY_KIND
    from elmo_bench.records.run_record import RunRecord
    from elmo_bench.report.encoder_names import base_label, recorded_label

    identity = {"kind": "manylangs", "model": "en", "hash": "h", "layers": 3, "dim": 8}
    assert label_record(identity) == {"encoder_label": "ELMoForManyLangs en"}
    assert label_record({"kind": SOURCE, "file": "x.hdf5", "hash": "h"}) == {}
    record = RunRecord(task="ner", metrics={}, encoder=identity, extra=label_record(identity))
    assert base_label(identity, recorded_label(record)) == "ELMoForManyLangs en"
    assert base_label(identity) == "manylangs en"                               # a record from before labels
    assert LEGACY_KIND == default_kind().name
