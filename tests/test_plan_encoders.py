"""Issue 35 item 4: ``elmo-bench plan`` costs any encoder: ``encoder_flops_per_token`` (per word position, what
the cache stores) and ``encoder_flops`` counted from a tiny Hugging Face model's own parameters (Kaplan et al.'s
2N + 2 n_layer n_ctx d_model per subword, times the subwords the encoder runs per word), 0 and the file's size for
hdf5, null with a note for a python class; ``bilm_flops``/``bilm_flops_per_token`` stay as aliases."""
from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from elmo_bench.commands.main import main
from elmo_bench.data.conll2003 import read_conll
from tests.conftest import REPO
from tests.hf_tiny import tiny_models

SAMPLE = ["task=ner", "data=ner_sample", "embedder=glove_elmo"]
OPTIONS = ["--format", "json", "--sample-batches", "1"]


def _plan(capsys, *overrides: str) -> dict:
    assert main(["plan", *SAMPLE, *overrides, *OPTIONS]) == 0
    return json.loads(capsys.readouterr().out)["runs"][0]


def _distinct_words() -> int:
    return sum(len(t) for split in ("train", "dev", "test")
               for t in {tuple(e["tokens"]) for e in read_conll(REPO / f"tasks/ner/samples/sample.{split}")})


def test_a_tiny_bert_is_costed_from_its_parameters(capsys):
    from transformers import AutoModel, AutoTokenizer

    path = tiny_models()["bert"]
    run = _plan(capsys, "encoder=transformers", f"encoder.path={path}")
    model, tokenizer = AutoModel.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    tables = ("word_embeddings.weight", "position_embeddings.weight", "token_type_embeddings.weight")
    n = sum(p.numel() for name, p in model.named_parameters() if not name.endswith(tables))
    train = [e["tokens"] for e in read_conll(REPO / "tasks/ner/samples/sample.train")]
    # each sample sentence fits one 64-token window: [CLS] its subwords [SEP]
    windows = [len(tokenizer(words, is_split_into_words=True)["input_ids"]) for words in train]
    n_ctx = sum(windows) / len(windows)
    per_subword = 2 * n + 2 * 2 * n_ctx * 32                              # 2 blocks, hidden size 32
    per_word = round(per_subword * sum(windows) / sum(len(w) for w in train))
    assert run["encoder_flops_per_token"] == run["bilm_flops_per_token"] == per_word
    distinct = _distinct_words()
    assert run["encoder_flops"] == run["bilm_flops"] == per_word * distinct
    assert run["cache_bytes"] == distinct * 3 * 32 * 2                    # 3 hidden states x 32 wide, fp16
    assert run["encoder"].startswith("transformers") and run["bilm"] is None
    assert run["gpu_hours"] > 0


def test_hdf5_costs_no_flops_and_its_file_is_the_cache(capsys, tmp_path):
    path = tmp_path / "layers.hdf5"
    with h5py.File(path, "w") as handle:
        handle.create_dataset("0", data=np.zeros((3, 2, 8), dtype=np.float32))
        handle.create_dataset("sentence_to_index", data=[json.dumps({"EU rejects": "0"})])
    run = _plan(capsys, "encoder=hdf5", f"encoder.path={path}")
    assert run["encoder_flops"] == run["bilm_flops"] == 0 and run["encoder_flops_per_token"] == 0
    assert run["cache_bytes"] == path.stat().st_size


def test_a_python_encoder_has_unknown_flops_and_says_so(capsys):
    run = _plan(capsys, "encoder=python", "encoder._target_=tests.user_encoder.hashing.HashingEncoder",
                "+encoder.dim=64")
    assert run["encoder_flops"] is None and run["bilm_flops"] is None and run["encoder_flops_per_token"] is None
    assert "not known" in run["encoder_note"]
    assert run["gpu_hours"] == pytest.approx(run["head_flops_total"] / (94e12 * 3600))   # the head only


def test_the_bilm_keeps_its_numbers_under_both_names(capsys):
    run = _plan(capsys)
    assert run["encoder_flops"] == run["bilm_flops"] > 0
    assert run["encoder_flops_per_token"] == run["bilm_flops_per_token"] and run["encoder"] == run["bilm"]


def _copy(source, target, *names):
    import shutil

    target.mkdir()
    for name in names:
        shutil.copy(source / name, target / name)
    return target


def test_a_directory_of_config_json_alone_is_priced_from_the_config_without_weights(capsys, tmp_path):
    # issue 46 item 8: parameters on the meta device, weight bytes in the dtype, the layers kept, estimated subwords
    from transformers import AutoModel

    from tests.hf_tiny import decoder_models

    source = decoder_models()["llama"]
    bare = _copy(source, tmp_path / "llama", "config.json")
    run = _plan(capsys, "encoder=transformers", f"encoder.path={bare}", "encoder.layers=every:2",
                "encoder.dtype=bfloat16")
    model = AutoModel.from_pretrained(source)
    params = sum(p.numel() for p in model.parameters())
    assert run["encoder_params"] == params and run["weight_bytes"] == 2 * params
    assert run["encoder_layer_indices"] == [0, 2, 3] and run["encoder_layers"] == 3
    assert run["cache_bytes"] == _distinct_words() * 3 * 32 * 2  # fp16 rows of the 3 kept layers
    assert "priced from config.json alone" in run["encoder_note"] and "estimated at 1.3 a word" in run["encoder_note"]
    # with its tokenizer beside it (still no weights) the subwords are counted: the numbers of the real model
    counted = _copy(source, tmp_path / "counted", "config.json", "tokenizer.json", "tokenizer_config.json")
    run = _plan(capsys, "encoder=transformers", f"encoder.path={counted}")
    real = _plan(capsys, "encoder=transformers", f"encoder.path={source}")
    assert "estimated" not in run["encoder_note"] and run["encoder_layer_indices"] == [0, 1, 2, 3]
    for key in ("encoder_params", "weight_bytes", "encoder_flops_per_token", "cache_bytes"):
        assert run[key] == real[key], key


def test_a_layer_subset_prices_only_the_blocks_that_run(capsys):
    from tests.hf_tiny import decoder_models

    path = decoder_models()["llama"]
    every = _plan(capsys, "encoder=transformers", f"encoder.path={path}")
    low = _plan(capsys, "encoder=transformers", f"encoder.path={path}", "encoder.layers=[0,1]")
    top = _plan(capsys, "encoder=transformers", f"encoder.path={path}", "encoder.layers=[3]")
    assert low["encoder_layer_indices"] == [0, 1] and low["cache_bytes"] * 2 == every["cache_bytes"]
    assert low["encoder_flops_per_token"] < every["encoder_flops_per_token"] / 2  # one block of three runs
    assert top["encoder_flops_per_token"] == every["encoder_flops_per_token"]   # the last runs them all
