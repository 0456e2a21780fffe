"""Issue 36 on the command line: probe-pos --control/--probe/--seeds/--random-init keys and bad input."""
from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, needs_fixtures
from tests.test_pos_probe_cli import DEV, TEST, TRAIN, conllu


def _data(tmp_path, train=TRAIN):
    data = tmp_path / "ewt"
    data.mkdir()
    for split, sentences in (("train", train), ("dev", DEV), ("test", TEST)):
        (data / f"en_ewt-ud-{split}.conllu").write_text(conllu(sentences))
    return data


def _argv(tmp_path, data, *extra, out="out"):
    return ["probe-pos", "--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--data-dir", str(data), "--cache-dir", str(tmp_path / "cache"), "--l2-grid", "1e-2,1e-3", "--no-glove",
            "--no-progress", "--out", str(tmp_path / out), *extra]


@needs_fixtures
def test_control_keys_selectivity_and_best_layer(tmp_path, capsys):
    from elmo_bench.commands.main import main

    data = _data(tmp_path)
    assert main(_argv(tmp_path, data, "--control", "--seeds", "1,2")) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rows = {"layer_0", "layer_1", "layer_2", "average"}
    assert set(printed["control"]["test"]) == rows and set(printed["control"]["dev"]) == rows   # today's keys
    for split in ("dev", "test"):
        for row in rows:
            assert printed["selectivity"][split][row] == pytest.approx(
                printed[split][row] - printed["control"][split][row], abs=0.011)
    assert printed["probing"]["seeds"] == [1, 2] and printed["best_layer"]["converged"]["split"] == "test"
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["control"]["test"].keys() == printed["control"]["test"].keys()
    assert results["metrics"]["test"]["layer_1_accuracy"] == pytest.approx(printed["test"]["layer_1"], abs=0.005)
    assert main(_argv(tmp_path, data, "--probe", "converged,mlp1", "--hidden", "8", "--max-epochs", "3",
                      "--random-init", "lstm", "--rows", "layer_1,average,layer_2")) == 2   # another identity
    assert "made by a different configuration" in capsys.readouterr().err     # never written over the first run
    assert main(_argv(tmp_path, data, "--probe", "converged,mlp1", "--hidden", "8", "--max-epochs", "3",
                      "--random-init", "lstm", "--rows", "layer_1,average,layer_2", out="out2")) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {k for k in printed["test"] if "/" in k} == {f"{p}/{r}" for p in ("converged", "mlp1")
                                                         for r in ("layer_1", "layer_2", "average")}
    assert printed["probing"]["settings"]["mlp1"]["hidden"] == 8 and "control" not in printed
    results = json.loads((tmp_path / "out2" / "results.json").read_text())
    assert results["encoder"]["random_init"] == "lstm" and results["bilm"]["random_init"] == "lstm"


@needs_fixtures
@pytest.mark.parametrize("extra, message", [
    (["--seeds", ""], "--seeds expected a comma-separated list"),
    (["--seeds", ",,"], "--seeds expected a comma-separated list"),
    (["--probe", "mlp3"], "probe.probe expected"),     # checked at the door, under the config key the flag sets
    (["--encoder", "hdf5", "--model", "x.hdf5", "--random-init", "all"], "encoder hdf5 cannot be randomised"),
    (["--encoder", "python", "--model", "a.B", "--random-init", "all"], "encoder python cannot be randomised"),
])
def test_bad_flags_are_one_line_exit_2_and_write_nothing(tmp_path, capsys, extra, message):
    from elmo_bench.commands.main import main

    data = _data(tmp_path)
    assert main(_argv(tmp_path, data, *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0]
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


@needs_fixtures
def test_missing_tag_column_is_one_line(tmp_path, capsys):
    from elmo_bench.commands.main import main

    data = _data(tmp_path)
    text = (data / "en_ewt-ud-train.conllu").read_text().replace("\tVBP\t", "\t_\t", 1)
    (data / "en_ewt-ud-train.conllu").write_text(text)
    assert main(_argv(tmp_path, data, "--control")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "en_ewt-ud-train.conllu:" in err[0] and "XPOS" in err[0]
    assert not (tmp_path / "out").exists()


def test_probe_wsd_takes_the_encoder_options_and_device():
    from elmo_bench.commands.probe_command import command_parser

    args = command_parser("probe-wsd").parse_args(["--out", "x", "--encoder", "transformers", "--model", "m", "--pooling", "mean",
                                      "--revision", "r", "--device", "cpu"])
    assert (args.encoder, args.model, args.pooling, args.revision, args.device) == ("transformers", "m", "mean", "r",
                                                                                    "cpu")


@needs_fixtures
def test_random_init_alone_keeps_todays_keys_and_is_marked(tmp_path, capsys):
    from elmo_bench.commands.main import main

    data = _data(tmp_path)
    assert main(_argv(tmp_path, data, "--random-init", "all", "--random-seed", "3")) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(printed["test"]) == {"layer_0", "layer_1", "layer_2", "average", "most_frequent_tag"}
    assert set(printed["l2"]) == {"layer_0", "layer_1", "layer_2", "average"}
    assert printed["random_init"] == {"mode": "all", "seed": 3} and printed["bilm"].endswith("-random-all-3")
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["random_init"] == {"mode": "all", "seed": 3} and results["encoder"]["random_seed"] == 3
