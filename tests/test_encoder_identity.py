"""The encoder group in a run's identity: old run directories (no encoder key) still match a default run, a
baseline without ELMo ignores the encoder, and another encoder is another identity."""
from __future__ import annotations

import json

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.live_identity import identity
from elmo_bench.engine.run_config import RunConfig
from elmo_bench.engine.run_identity import check_run_dir
from elmo_bench.engine.run_records import RUN_FILE
from tests.engine_helpers import compose_run


def _identity(tmp_path, *overrides: str) -> tuple[dict, RunConfig]:
    run = run_config(compose_run(tmp_path, "task=ner", "data=ner_sample", *overrides, tiny=False))
    return identity(run, "somehash", "code"), run


def test_a_run_directory_from_before_the_encoder_group_still_matches_the_default(tmp_path):
    current, made = _identity(tmp_path)
    assert current["encoder.kind"] == "bilm"
    stored = {k: v for k, v in current.items() if not k.startswith("encoder.")}
    run = tmp_path / "run"
    run.mkdir()
    (run / RUN_FILE).write_text(json.dumps({"identity": stored, "config": made.config()}))
    (run / "checkpoint.pt").write_bytes(b"")  # a run under way (a bare results.json is refused as not ours)
    assert check_run_dir(run, current, made) is False  # same experiment: resumed, not refused
    other, other_made = _identity(tmp_path, "encoder=hdf5", "encoder.path=/x.hdf5")
    with pytest.raises(ConfigError, match=r"encoder.kind: \"bilm\" → \"hdf5\""):
        check_run_dir(run, other, other_made)


def test_a_glove_baseline_ignores_the_encoder(tmp_path):
    plain, _ = _identity(tmp_path, "embedder=glove")
    other, _ = _identity(tmp_path, "embedder=glove", "encoder=hdf5", "encoder.path=/x.hdf5")
    assert plain == other and not any(k.startswith("encoder.") for k in plain)
