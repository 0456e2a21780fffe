"""Issue 56 item 5: ``elmo-bench plan`` over a Hugging Face directory holding only an odd ``config.json`` is one
line naming the file and key and what was expected, exit 2 (no ZeroDivisionError, RuntimeError or TypeError
traceback, no quarter-hour build of a million layers, no silent class default); ``plan --device cuda`` prices on a
machine without a GPU; a flag between two overrides leaves both overrides."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.main import main
from elmo_bench.encoders.transformers.model_size import check_sizes
from tests.hf_tiny import tiny_models

#: (key, value; None: the key left out) -> what the line says
CASES = {
    "zero_layers": ("num_hidden_layers", 0, "num_hidden_layers expected an integer in 1..1,000 (the model's blocks), "
                                            "found 0"),
    "negative_width": ("hidden_size", -32, "hidden_size expected an integer in 1..65,536 (the model's width), "
                                           "found -32"),
    "string_layers": ("num_hidden_layers", "32", "num_hidden_layers expected an integer in 1..1,000 (the model's "
                                                 "blocks), found '32'"),
    "float_width": ("hidden_size", 2.5, "hidden_size expected an integer in 1..65,536 (the model's width), found 2.5"),
    "a_million_layers": ("num_hidden_layers", 1000000, "num_hidden_layers expected an integer in 1..1,000 (the "
                                                       "model's blocks), found 1000000"),
    "no_layers": ("num_hidden_layers", None, "no num_hidden_layers; expected an integer in 1..1,000 (the model's "
                                             "blocks), not its class's default"),
    "no_positions": ("max_position_embeddings", 0, "max_position_embeddings expected an integer in 1..16,777,216 "
                                                   "(the model's longest input), found 0"),
    "boolean_heads": ("num_attention_heads", True, "num_attention_heads expected an integer in 1..65,536 (the "
                                                   "model's attention heads), found True"),
}


def bare(tmp_path: Path, key: str, value: object) -> Path:
    """A model directory of the tiny BERT's config.json alone, ``key`` set to ``value`` (None: removed)."""
    config = json.loads((tiny_models()["bert"] / "config.json").read_text())
    if value is None:
        config.pop(key)
    else:
        config[key] = value
    directory = tmp_path / "model"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(config))
    return directory


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_odd_size_is_one_line_naming_the_file_and_key(tmp_path, case) -> None:
    key, value, said = CASES[case]
    directory = bare(tmp_path, key, value)
    with pytest.raises(ConfigError) as caught:
        check_sizes(directory / "config.json")
    assert str(caught.value) == f"{directory / 'config.json'}: {said}"


def test_gpt2s_own_key_names_are_read_through_its_attribute_map(tmp_path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_layer": 0, "n_embd": 32}))
    with pytest.raises(ConfigError, match=r"config\.json: n_layer expected an integer in 1\.\.1,000"):
        check_sizes(tmp_path / "config.json")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_layer": 2, "n_embd": 32}))
    check_sizes(tmp_path / "config.json")                     # GPT-2's names: nothing missing


@pytest.mark.parametrize("case", ["zero_layers", "a_million_layers", "string_layers"])
def test_plan_over_an_odd_config_is_exit_2_at_once(tmp_path, capsys, case) -> None:
    key, value, said = CASES[case]
    directory = bare(tmp_path, key, value)
    started = time.perf_counter()
    assert main(["plan", "probe=structural", "probe.data_dir=/nonexistent/ud", "encoder=transformers",
                 f"encoder.path={directory}"]) == 2
    assert time.perf_counter() - started < 120
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert lines == [f"error: {directory / 'config.json'}: {said}"] and captured.out == ""


def test_a_bad_pairing_the_model_class_refuses_is_one_line_too(tmp_path, capsys) -> None:
    directory = bare(tmp_path, "num_attention_heads", 5)                        # width 32 is no multiple of 5
    assert main(["plan", "probe=structural", "probe.data_dir=/nonexistent/ud", "encoder=transformers",
                 f"encoder.path={directory}"]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"error: {directory / 'config.json'}: the model cannot be built from it (") and \
        "\n" not in line


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here: --device cuda measures on it")
def test_plan_device_cuda_prices_on_a_machine_without_a_gpu(capsys) -> None:
    args = ["plan", "probe=structural", "probe.data_dir=/nonexistent/ud", "--format", "json"]
    assert main([*args, "--device", "cuda"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["device"] == "cpu" and result["device_note"].startswith("--device cuda: no GPU here")
    assert main([*args, "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == result["runs"]          # the same prices


def test_a_flag_between_two_overrides_leaves_both_overrides(capsys) -> None:
    assert main(["plan", "probe=structural", "--device", "cpu", "probe.data_dir=/nonexistent/ud",
                 "probe.max_train_sentences=300", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["runs"]
    assert row["sizes"] == "documented" and row["sentences"] == 300
