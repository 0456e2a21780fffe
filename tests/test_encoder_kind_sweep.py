"""Issue 56 item 3: one sweep over encoder kinds, each with its own keys (elmo_bench/engine/encoder_sweep.py).
``python run.py -m probe=ridge encoder=bilm,transformers encoder.path=DIR`` runs the shipped biLM beside a tiny
random BERT saved offline (tests/hf_tiny.py); the biLM's job is the biLM alone (its identity, record and directory
name carry no ``path``), a task sweep composes the same way, and outside a sweep the foreign key is one line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.engine.encoder_sweep import encoder_sweep_args, option_keys, swept_options

SWEEP = ["run.py", "-m", "probe=ridge", "encoder=bilm,transformers", "encoder.path=/m/bert", "encoder.pooling=first",
         "encoder.cache_dtype=fp32", "seed=2"]


def test_only_a_key_one_swept_kind_lacks_is_passed_with_plus_plus():
    assert encoder_sweep_args(SWEEP) == ["run.py", "-m", "probe=ridge", "encoder=bilm,transformers",
                                         "++encoder.path=/m/bert", "++encoder.pooling=first",
                                         "encoder.cache_dtype=fp32", "seed=2"]   # every kind has cache_dtype
    single = ["run.py", "probe=ridge", "encoder=transformers", "encoder.path=/m/bert"]
    assert encoder_sweep_args(single) == single                                   # no sweep: as typed
    assert swept_options(["encoder=bilm, transformers"]) == ["bilm", "transformers"]
    assert "path" in option_keys("transformers") and "path" not in option_keys("bilm")
    assert option_keys("nosuchkind") is None
    unknown = ["run.py", "-m", "encoder=bilm,nosuchkind", "encoder.path=x"]
    assert encoder_sweep_args(unknown) == unknown                                 # Hydra's own line for the option


def _config(run) -> dict:
    config = run.config()
    config.pop("choices", None)
    return config


@pytest.mark.parametrize("head", [["probe=ridge"], ["task=ner", "embedder=elmo"]], ids=["probe", "task"])
def test_a_foreign_key_leaves_the_kind_alone_in_a_sweep_and_is_one_line_outside(head, tmp_path):
    from elmo_bench.commands.plan import job_run

    foreign = ["++encoder.path=/m/bert", "++encoder.pooling=first", "++encoder.layers=[0,1]"]
    alone = job_run([*head, "encoder=bilm"], files=False)
    swept = job_run([*head, "encoder=bilm", *foreign], files=False, multirun=True)
    assert _config(swept) == _config(alone)                          # same identity: the biLM alone
    assert "path" not in _config(swept)["encoder"] and "/m/bert" not in json.dumps(_config(swept))
    with pytest.raises(ConfigError, match=r"encoder.path \(from \+\+encoder.path\) is not a key of encoder kind "
                                          r"bilm; only in a sweep over encoder kinds"):
        job_run([*head, "encoder=bilm", *foreign], files=False)
    with pytest.raises(ConfigError, match=r"unknown key encoder.nonsense"):  # a key no kind has: refused as before
        job_run([*head, "encoder=bilm", "++encoder.nonsense=1"], files=False, multirun=True)
    model = job_run([*head, "encoder=transformers", *foreign], files=False, multirun=True)
    assert model.encoder.spec["path"] == "/m/bert" and model.encoder.spec["pooling"] == "first"


def test_the_sweep_names_the_biLM_job_as_the_biLM_alone():
    from elmo_bench.commands.hydra_setup import compose_config, sweep_path

    swept = compose_config(["task=ner", "encoder=bilm", "++encoder.path=/m/bert", "++encoder.pooling=first"])
    alone = compose_config(["task=ner", "encoder=bilm"])
    assert sweep_path("++encoder.path=/m/bert,++encoder.pooling=first,encoder=bilm,seed=1", _root_=swept) == \
        sweep_path("encoder=bilm,seed=1", _root_=alone) == "ner/glove_elmo-seed1/encoder=bilm"
    model = compose_config(["task=ner", "encoder=transformers", "++encoder.pooling=first", "++encoder.path=/m/b"])
    assert sweep_path("++encoder.pooling=first,encoder=transformers", _root_=model) == \
        "ner/glove_elmo-seed1/++encoder.pooling=first,encoder=transformers"   # the kind that has it: named


def test_run_py_sweeps_the_shipped_biLM_beside_a_tiny_model_in_one_command(tmp_path):
    """The documented command, end to end: two probe runs, the biLM's and the model's, each its own encoder; the
    biLM's is the run a plain ``probe=ridge`` makes (run again into its directory, it is skipped as done)."""
    pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe
    from tests.hf_tiny import tiny_models
    from tests.test_probe_runs import ewt, results, run_py

    data, bert = ewt(tmp_path / "ewt", train=40), tiny_models()["bert"]
    where = [f"paths.results_dir={tmp_path / 'results'}", f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled",
             "progress=false", f"probe.data_dir={data}"]
    done = run_py("-m", "probe=ridge", "encoder=bilm,transformers", f"encoder.path={bert}", *where)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = results(tmp_path / "results" / "multirun")
    assert sorted(runs) == ["probes/ridge/shipped-seed1", "probes/ridge/transformers-bert-seed1"], runs
    records = {name: json.loads(path.read_text()) for name, path in runs.items()}
    assert records["probes/ridge/shipped-seed1"]["encoder"]["kind"] == "bilm"
    assert records["probes/ridge/transformers-bert-seed1"]["encoder"]["model"] == "bert"
    printed = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(printed) == 2 and all("layer_2" in p["test"] for p in printed)
    bilm_dir = runs["probes/ridge/shipped-seed1"].parent
    stamp = (bilm_dir / "results.json").stat().st_mtime_ns
    run_probe(job_run(["probe=ridge", *where]), bilm_dir)          # the biLM alone: same identity, skipped
    assert (bilm_dir / "results.json").stat().st_mtime_ns == stamp


def test_plan_prices_the_biLM_beside_a_model_in_one_command(tmp_path, capsys):
    pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")
    from elmo_bench.commands.main import main
    from tests.hf_tiny import tiny_models
    from tests.test_probe_runs import ewt

    data, bert = ewt(tmp_path / "ewt", train=40), tiny_models()["bert"]
    assert main(["plan", "--format", "json", "probe=ridge", "encoder=bilm,transformers", f"encoder.path={bert}",
                 f"probe.data_dir={data}"]) == 0
    runs = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["runs"]
    assert [run["encoder"] for run in runs] == ["bilm/shipped", "transformers"], runs
