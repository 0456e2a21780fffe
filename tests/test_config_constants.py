"""Issue 35 item 2's disagreements, each settled once: ``max_segment`` (one constant, Runtime's default),
the results file name (one constant), the pretrain settings the code no longer falls back on (every preset sets
them), and SQuAD's answer_offsets (the run default, refuse, also when the task is read directly)."""
from __future__ import annotations

import ast
import os
from pathlib import Path

import yaml

from elmo_bench.encoders.segments import MAX_SEGMENT
from elmo_bench.records.run_record import RESULTS_FILE
from tests.conftest import REPO


def _sources() -> list[Path]:
    return sorted(Path(folder) / name for folder, _, names in os.walk(REPO / "elmo_bench", followlinks=True)
                  for name in names if name.endswith(".py"))


def test_max_segment_is_one_value():
    from elmo_bench.engine.config_schema import runtime_schema

    assert "max_segment" not in yaml.safe_load((REPO / "conf" / "config.yaml").read_text())  # Runtime's default
    assert runtime_schema()["max_segment"] == MAX_SEGMENT == 256
    literal = [f"{p.relative_to(REPO)}:{n.lineno}" for p in _sources()
               for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.Constant) and n.value == 256
               and "segment" in p.read_text().splitlines()[n.lineno - 1].lower()]
    assert literal == ["elmo_bench/encoders/segments.py:7"], literal


def test_the_results_file_name_is_written_once():
    found = [f"{p.relative_to(REPO)}:{n.lineno}" for p in _sources() for n in ast.walk(ast.parse(p.read_text()))
             if isinstance(n, ast.Constant) and n.value == RESULTS_FILE]
    assert found == ["elmo_bench/records/run_record.py:30"], found


def test_every_pretrain_preset_sets_what_the_trainer_reads_without_fallback():
    """pretrain/train.py read log_every 50, threads 1, dropout 0.0, min_count 1 when a key was absent, against
    conf/pretrain/default.yaml's 25, 2, 0.1, 3: no composed config lacked them, so the presets' values were always
    the ones used. The YAML's values won: they are PretrainConfig's defaults now (the one place a default is
    written; the ``pretrain/schema`` node every preset composes over is generated from it), and the code reads
    the typed object, with no fallback of its own (tests/test_pretrain_config.py: no ``.get`` on configuration)."""
    from elmo_bench.pretrain.pretrain_config import PretrainConfig

    defaults = PretrainConfig()
    assert (defaults.log_every, defaults.threads, defaults.dropout, defaults.min_count) == (25, 2, 0.1, 3)
    default_yaml = yaml.safe_load((REPO / "conf" / "pretrain" / "default.yaml").read_text())
    assert [default_yaml[key] for key in ("log_every", "threads", "dropout", "min_count")] == [25, 2, 0.1, 3]
    for preset in sorted((REPO / "conf" / "pretrain").glob("*.yaml")):
        settings = yaml.safe_load(preset.read_text())
        assert settings["defaults"][0] == "schema", preset.name  # what a preset leaves out is the dataclass's
        needed = {"log_every", "threads", "dropout"} | ({"min_count"} if preset.stem != "finetune" else set())
        assert needed <= set(settings), (preset.name, needed - set(settings))
