"""Issue 46 item 9 on a 33-layer tiny Llama-style model built offline (tests/hf_tiny.deep_model): ``elmo-bench
modes`` and ``experiment=probe_pos`` sweep every layer of the encoder (or those ``encoder.layers`` keeps), every K-th
and the last with a stride, never a fixed 0..2; ``mix.layer`` names a layer by its index in the model; and the
records of a transformers run name that encoder (no ``bilm`` block), the dtype it ran in and the model by name and
hash."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")

from elmo_bench.base.errors import ConfigError  # noqa: E402
from elmo_bench.commands.main import main  # noqa: E402
from elmo_bench.commands.modes import mode_overrides, strided  # noqa: E402
from elmo_bench.records.elmo_settings import ElmoSettings, canonical_mix, mix_position  # noqa: E402
from tests.hf_tiny import deep_model  # noqa: E402

EVERY_8 = [0, 8, 16, 24, 32]


@pytest.fixture(scope="module")
def deep() -> Path:
    return deep_model(32)


def _modes(capsys, *args: str) -> list[str]:
    assert main(["modes", "task=edge_pos", "embedder=elmo", *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_strided_is_every_kth_layer_and_the_last():
    assert strided(range(33), 8) == EVERY_8
    assert strided(range(33), 5) == [0, 5, 10, 15, 20, 25, 30, 32]
    assert strided(range(33), None) == list(range(33)) and strided(range(33), 1) == list(range(33))
    assert strided([0, 4, 8, 12, 16, 20, 24, 28, 32], 3) == [0, 12, 24, 32]     # over the layers an encoder keeps
    with pytest.raises(ConfigError, match="stride expected an integer >= 1, found 0"):
        strided(range(3), 0)
    names = [name for name, _ in mode_overrides(list(range(33)), 16)]
    assert names == ["lexical", "layer 16", "layer 32", "cumulative 16", "full"]


def test_a_mix_layer_is_the_models_index_and_the_mix_takes_its_position():
    settings = ElmoSettings(mode="layer", layer_index=16)
    assert mix_position(settings, EVERY_8).layer_index == 2 and settings.layer_index == 16     # the record keeps 16
    assert mix_position(settings, list(range(33))) is settings
    assert mix_position(ElmoSettings(), EVERY_8).layer_index is None


def test_modes_sweeps_all_33_layers_of_a_deep_model_or_every_kth_and_the_last(deep, capsys):
    encoder = ["encoder=transformers", f"encoder.path={deep}"]
    every = _modes(capsys, *encoder)
    singles = [int(line.rsplit("=", 1)[1]) for line in every if "mix=layer " in line]
    cumulative = [int(line.rsplit("=", 1)[1]) for line in every if "mix=cumulative " in line]
    assert singles == list(range(33)) and cumulative == list(range(1, 32)) and every[-1].endswith("mix=learned")
    assert len(every) == 2 * 32 + 1
    lines = _modes(capsys, *encoder, "--stride", "8")
    assert [line.split(" ", 4)[-1] for line in lines] == [
        *(f"mix=layer mix.layer={k}" for k in EVERY_8), *(f"mix=cumulative mix.layer={k}" for k in (8, 16, 24)),
        "mix=learned"]
    kept = _modes(capsys, *encoder, "encoder.layers=every:4")          # the layers the encoder keeps, by model index
    assert [int(x.rsplit("=", 1)[1]) for x in kept if "mix=layer " in x] == list(range(0, 33, 4))
    both = _modes(capsys, *encoder, "encoder.layers=every:4", "--stride", "3")
    assert [int(x.rsplit("=", 1)[1]) for x in both if "mix=layer " in x] == [0, 12, 24, 32] and len(both) == 7
    assert main(["modes", "task=edge_pos", *encoder, "--stride", "0"]) == 2
    assert capsys.readouterr().err.strip() == "error: config: a layer stride expected an integer >= 1, found 0"


def test_plan_expands_all_modes_with_the_same_stride(deep):
    from elmo_bench.commands.compose import expand_sweep
    from elmo_bench.commands.plan import build_parser

    jobs = expand_sweep(["task=edge_pos", "embedder=elmo", "encoder=transformers", f"encoder.path={deep}",
                         "mix=all_modes"], stride=8)
    assert [" ".join(job[-2:]) for job in jobs] == [
        *(f"mix=layer mix.layer={k}" for k in EVERY_8), *(f"mix=cumulative mix.layer={k}" for k in (8, 16, 24)),
        f"encoder.path={deep} mix=learned"]
    assert build_parser().parse_args(["task=edge_pos", "mix=all_modes", "--stride", "8"]).stride == 8


def test_probe_pos_rows_are_the_encoders_layers_all_or_every_kth(deep):
    from elmo_bench.commands.compose import expand_sweep

    encoder = ["encoder=transformers", f"encoder.path={deep}"]

    def rows(*extra: str) -> list[str]:
        jobs = expand_sweep(["experiment=probe_pos", *encoder, "seed=1", *extra])
        return [o.split("=", 1)[1] for job in jobs for o in job if o.startswith("row=")]

    assert rows() == [*(f"layer_{k}" for k in range(33)), "learned"]            # all 33, never 0..2
    assert rows("row=every:8") == [*(f"layer_{k}" for k in EVERY_8), "learned"]
    assert rows("encoder.layers=every:8") == [*(f"layer_{k}" for k in EVERY_8), "learned"]
    assert rows("row=layer_5,learned") == ["layer_5", "learned"]                 # rows named: left as they are
    with pytest.raises(ConfigError, match="row expected all, every:K"):
        rows("row=every:0")


def test_mix_layer_names_the_models_index_and_the_record_names_the_encoder(deep, tmp_path):
    """A one-layer mix over encoder.layers=every:8 takes the model's layer 16 (position 2 of the 5 kept); a layer
    the encoder does not keep is one line; results.json names the transformers encoder, its dtype and the model by
    name and hash, with no bilm block and no absolute path in the encoder's record."""
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment
    from tests.test_engine import _cfg

    common = ["trainer.max_epochs=1", "embedder=elmo", "encoder=transformers", f"encoder.path={deep}",
              "encoder.layers=every:8", "encoder.dtype=bfloat16"]
    done = run_experiment(run_config(_cfg(tmp_path, *common, "mix=layer", "mix.layer=16")), tmp_path / "run")
    assert done["elmo"]["mode"] == "layer" and done["elmo"]["layer_index"] == 16
    assert done["mixes"]["input"]["weights"] == [0.0, 0.0, 1.0, 0.0, 0.0]
    record = json.loads((tmp_path / "run" / "results.json").read_text())
    encoder = record["encoder"]
    assert encoder["encoder_layer_indices"] == EVERY_8 and encoder["dtype"] == "bfloat16"
    assert encoder["precision"] == "bf16" and encoder["model"] == deep.name and len(encoder["hash"]) == 16
    assert str(deep.parent) not in json.dumps(encoder)
    assert record["bilm"] is None and "bilm" not in record["config"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["config"]["bilm"]   # the identity's input: whole
    cumulative = {"name": "cumulative", "mode": "cumulative"}
    assert canonical_mix({**cumulative, "layer": 32}, EVERY_8)["mode"] == "learned"   # to the last kept: the mix
    assert canonical_mix({**cumulative, "layer": 0}, EVERY_8) == {"name": "layer", "mode": "layer", "layer": 0}
    assert canonical_mix({**cumulative, "layer": 16}, EVERY_8)["mode"] == "cumulative"
    with pytest.raises(ConfigError, match=r"among the encoder's layers \[0, 8, 16, 24, 32\].*found 5"):
        run_experiment(run_config(_cfg(tmp_path, *common, "mix=layer", "mix.layer=5")), tmp_path / "bad")
    assert not (tmp_path / "bad" / "results.json").exists()


def test_a_transformers_probe_record_has_no_bilm_block_and_names_its_dtype(deep, tmp_path):
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import run_probe
    from tests.test_probe_runs import ewt

    data = ewt(tmp_path / "ewt", train=40)
    run_probe(job_run(["probe=pos", "encoder=transformers", f"encoder.path={deep}", "encoder.layers=every:16",
                       f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled", "progress=false",
                       f"probe.data_dir={data}", "probe.glove=false"]), tmp_path / "probe")
    record = json.loads((tmp_path / "probe" / "results.json").read_text())
    assert record["bilm"] is None and "bilm" not in record["config"] and "bilm" not in record["config"]["choices"]
    assert record["encoder"]["dtype"] == "float32" and record["encoder"]["model"] == deep.name
    assert record["encoder"]["encoder_layer_indices"] == [0, 16, 32]
    assert {k for k in record["printed"]["dev"] if k.startswith("layer_")} == {"layer_0", "layer_16", "layer_32"}
    assert record["main_metric"] == "layer_16_accuracy" in record["metrics"]["test"]    # a metric the run has
    assert "bilm" not in record["printed"] and record["printed"]["encoder"].startswith("transformers-")  # issue 56
