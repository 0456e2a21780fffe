"""The commands docs/encoders.md gives for running Table 1 and the probes with each encoder kind compose as written:
the Table 1 sweep with ``embedder=glove_elmo encoder=...`` launches the +encoder runs only (the GloVe baselines come
from the biLM sweep, shared by every encoder), and the probe command lines parse."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from elmo_bench.commands.probe_command import command_parser
from tests.test_presets import _compose, _jobs

DOC = Path(__file__).resolve().parents[1] / "docs" / "encoders.md"
KINDS = {"transformers": ["encoder.path=DIR"], "hdf5": ["encoder.path=FILE"], "manylangs": ["encoder.path=DIR"],
         "python": ["encoder._target_=tests.user_encoder.hashing.HashingEncoder", "+encoder.dim=64"]}


def documented(prefix: str) -> list[str]:
    """Every command of docs/encoders.md's table of kinds that starts with ``prefix`` (backticked cells)."""
    text = DOC.read_text(encoding="utf-8")
    return [c for c in re.findall(r"`([^`]+)`", text) if c.startswith(prefix)]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_table1_sweep_with_an_encoder_runs_its_plus_encoder_runs_only(kind):
    extra = ["embedder=glove_elmo", f"encoder={kind}", *KINDS[kind]]
    jobs = _jobs("table1", extra)
    assert len(jobs) == 6 * 5                                     # six tasks x five seeds, no baseline runs
    assert all("embedder=glove_elmo" in job and f"encoder={kind}" in job for job in jobs)
    cfg = _compose(["experiment=table1", *jobs[0]])
    assert cfg.encoder.kind == kind and cfg.embedder.elmo and cfg.task.name == "squad"


def test_the_documented_table1_commands_name_every_kind():
    commands = documented("python run.py -m experiment=table1 embedder=glove_elmo")
    kinds = {m.group(1) for c in commands if (m := re.search(r"encoder=(\w+)", c))}
    assert kinds >= set(KINDS)


@pytest.mark.parametrize("command", documented("elmo-bench probe-"))
def test_the_documented_probe_commands_parse(command):
    words = [w for w in shlex.split(command.replace("[", "").replace("]", "")) if w != "\\"]
    parser = command_parser(words[1])
    args = parser.parse_args(words[2:])
    assert args.out                                              # the report reads OUT/results.json
    if "--encoder" in words:
        assert args.encoder == words[words.index("--encoder") + 1] and args.model
