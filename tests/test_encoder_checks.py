"""Issue 34 (encoders): every encoder setting range-checked, and a Hugging Face encoder checked before its layers
are trusted. Tiny BERT / GPT-2 models built offline from configs (tests/hf_tiny.py); each case failed before."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")

from elmo_bench.base.errors import ConfigError  # noqa: E402
from elmo_bench.encoders.build import build_encoder  # noqa: E402
from elmo_bench.encoders.transformers.encoder import TransformersEncoder  # noqa: E402
from tests.hf_tiny import tiny_models  # noqa: E402
from tests.warm_python import run_python

SENTENCE = ["Peters", "trained", "a", "bidirectional", "model", "on", "Paris", "."]


@pytest.fixture(scope="module")
def models() -> dict[str, Path]:
    return tiny_models()


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    """Never reach the network: a hub look-up, if one happened, would fail at once from an empty cache."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def _copy(source: Path, target: Path, *names: str) -> Path:
    target.mkdir()
    for name in names or [p.name for p in source.iterdir() if p.is_file()]:
        shutil.copy(source / name, target / name)
    return target


@pytest.mark.parametrize("key, value, message", [
    ("batch_size", -3, r"config: encoder.batch_size expected an integer >= 1, found -3"),
    ("batch_size", 0, r"encoder.batch_size expected an integer >= 1, found 0"),
    ("batch_size", 2.5, r"encoder.batch_size expected an integer >= 1, found 2.5"),
    ("max_length", 0, r"encoder.max_length expected an integer >= 1 or null, found 0"),
    ("pooling", "max", r"encoder.pooling expected one of auto, first, last, mean, found 'max'"),
    ("amp", "fp8", r"encoder.amp expected one of off, bf16, fp16, found 'fp8'"),
    ("cache_dtype", "fp64", r"encoder.cache_dtype expected one of fp16, fp32, found 'fp64'"),
    ("path", "???", r"encoder=transformers needs encoder.path \(a model directory or a hub name\); found none"),
])
def test_every_encoder_setting_is_range_checked_in_one_place(key, value, message):
    from elmo_bench.encoders.settings import check_encoder_settings

    spec = {"kind": "transformers", "path": "DIR", "pooling": "first", "batch_size": 32, "max_length": None}
    with pytest.raises(ConfigError, match=message):
        check_encoder_settings({**spec, key: value})
    with pytest.raises(ConfigError, match=message):  # the door every command builds its encoder through
        build_encoder({**spec, key: value})


def test_batch_size_minus_3_no_longer_gives_zero_layers(models):
    # before: range(0, n, -3) ran no batch, so every layer was 0 and was cached under the correct run's key
    with pytest.raises(ConfigError, match="encoder.batch_size expected an integer >= 1, found -3"):
        TransformersEncoder(str(models["bert"]), batch_size=-3)


def test_a_model_directory_without_tokenizer_files_is_refused(models, tmp_path):
    bare = _copy(models["bert"], tmp_path / "bare", "config.json", "model.safetensors")
    with pytest.raises(ConfigError, match=r"the tokenizer has no token but its 5 special ones"):
        TransformersEncoder(str(bare))


def test_a_tokenizer_that_makes_most_of_the_first_training_sentence_unknown_is_refused(models):
    from elmo_bench.encoders.cache_read import check_first_sentence

    encoder = TransformersEncoder(str(models["bert"]))
    check_first_sentence(encoder, [SENTENCE], "the first training sentence")  # the tiny vocabulary knows it
    with pytest.raises(ConfigError, match=r"3 of the 4 words of the first training sentence become the unknown "
                                          r"token '\[UNK\]'"):
        check_first_sentence(encoder, [["漢字", "テスト", "ä€", "a"]], "the first training sentence")


@pytest.mark.parametrize("path, found", [("./no/such/model", "no such directory"),
                                         ("/nonexistent/bert", "no such directory"),
                                         ("~/no-such-model-dir-34", "no such directory")])
def test_a_missing_model_directory_is_no_such_directory_not_a_hub_lookup(path, found):
    with pytest.raises(ConfigError, match=rf"encoder.path {path}: {found} \(expected a model directory"):
        TransformersEncoder(path)


def test_a_file_as_model_directory_and_a_corrupt_config_json_are_one_line(models, tmp_path):
    file = tmp_path / "model.bin"
    file.write_bytes(b"x")
    with pytest.raises(ConfigError, match="is a file"):
        TransformersEncoder(str(file))
    broken = _copy(models["bert"], tmp_path / "broken")
    (broken / "config.json").write_text('{"model_type": "bert", ')
    with pytest.raises(ConfigError, match=r"config.json: not valid JSON \(Expecting property name"):
        TransformersEncoder(str(broken))
    (broken / "config.json").unlink()  # no config at all: one line, not a traceback
    with pytest.raises(ConfigError, match=r"broken: cannot be loaded"):
        TransformersEncoder(str(broken))


def test_the_window_is_the_smaller_of_the_tokenizer_and_the_position_table(models, tmp_path):
    with pytest.raises(ConfigError, match=r"encoder.max_length 100 exceeds the model's position table \(64 "):
        TransformersEncoder(str(models["bert"]), max_length=100)
    loose = _copy(models["bert"], tmp_path / "loose")
    config = json.loads((loose / "tokenizer_config.json").read_text())
    (loose / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": 512}))
    encoder = TransformersEncoder(str(loose))
    assert encoder.window == 64  # the tokenizer's 512 would index past the 64 positions
    long = SENTENCE * 8  # more than 64 tokens: windows, not an index error
    layers, _ = encoder.layers([long])
    assert layers.shape == (1, 3, len(long), 32) and bool(torch.isfinite(layers).all())


def test_a_sentence_that_fits_one_window_is_never_altered(models):
    from tests.test_encoder_transformers import _plain

    words = ["bidirectional"]
    hidden, word_ids = _plain(models["bert"], words)
    subwords = sum(1 for w in word_ids if w == 0)
    window = len(word_ids)  # exactly the sentence: it fits, yet the word is longer than half the window
    encoder = TransformersEncoder(str(models["bert"]), max_length=window)
    assert subwords > encoder.content // 2 >= 1
    layers, _ = encoder.layers([words])
    torch.testing.assert_close(layers[0, :, 0], hidden[:, word_ids.index(0)], rtol=1e-5, atol=1e-5)
    assert encoder.forced_unknown([words]) == [0]
    # the same word in a sentence that does not fit one window is forced to the unknown token, and counted
    assert encoder.forced_unknown([words + ["a", "model"], [], words]) == [1, 0, 0]


def test_a_byte_level_tokenizer_saved_as_a_generic_fast_tokenizer_gets_its_prefix_space(models, tmp_path):
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    generic = _copy(models["gpt2"], tmp_path / "generic", "config.json", "model.safetensors")
    backend = AutoTokenizer.from_pretrained(models["gpt2"]).backend_tokenizer
    PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", eos_token="</s>",
                            model_max_length=64).save_pretrained(generic)
    own = TransformersEncoder(str(models["gpt2"]))
    saved = TransformersEncoder(str(generic))
    inside = saved.tokenizer([["a", "the"]], is_split_into_words=True, add_special_tokens=False)["input_ids"][0]
    assert saved.tokenizer.convert_ids_to_tokens(inside)[-1].startswith("Ġ")  # "the" as inside running text
    expected, _ = own.layers([SENTENCE])
    found, _ = saved.layers([SENTENCE])
    torch.testing.assert_close(found, expected, rtol=1e-5, atol=1e-5)


def test_a_bad_target_message_keeps_its_cause():
    with pytest.raises(ConfigError, match=r"No module named 'nosuch'.*Are you sure that module 'nosuch' is "
                                          r"installed\?"):
        build_encoder({"kind": "python", "_target_": "nosuch.module.Encoder"})


def test_an_unreachable_hub_fails_at_once(monkeypatch, tmp_path):
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # a hub that cannot be reached (before: 52 s
    # of retry warnings, then the line)
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=r"hub model 'bert-base-cased' .* encoder.path=DIR"):
        TransformersEncoder("bert-base-cased")
    assert time.perf_counter() - started < 15


def test_a_run_records_forced_unknown_words_per_split_and_the_precision_the_head_saw(models, tmp_path):
    from elmo_bench.data.conll2003 import read_conll
    from tests.conftest import REPO
    from tests.test_encoder_transformers import _run

    _run(tmp_path, "run", "embedder=glove_elmo", "encoder=transformers", f"encoder.path={models['bert']}",
         "encoder.max_length=8")
    record = json.loads((tmp_path / "run" / "results.json").read_text())["encoder"]
    assert record["layer_precision"] == "fp16" and record["window"] == 8
    # by hand: in a sentence of more than 8 tokens (with [CLS] and [SEP]), each word of more than 3 subwords
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(models["bert"])
    expected = 0
    for example in read_conll(REPO / "tasks" / "ner" / "samples" / "sample.train"):
        encoded = tokenizer(list(example["tokens"]), is_split_into_words=True)
        if len(encoded["input_ids"]) > 8:
            ids = [w for w in encoded.word_ids() if w is not None]
            expected += sum(1 for w in set(ids) if ids.count(w) > 3)
    assert expected > 0 and record["forced_unknown_words"]["train/tokens"] == expected
    assert set(record["forced_unknown_words"]) == {"train/tokens", "dev/tokens", "test/tokens"}
    metas = [json.loads(p.read_text()) for p in (tmp_path / "cache").glob("v2-*/meta.json")]
    assert sorted(m["forced_unknown_words"] for m in metas) == sorted(record["forced_unknown_words"].values())


def test_run_py_with_encoder_batch_size_minus_3_is_one_line_and_caches_nothing(models, tmp_path):
    import os

    from tests.conftest import REPO

    done = run_python(["run.py", "task=ner", "data=ner_sample", "embedder=elmo",
                       "encoder=transformers", f"encoder.path={models['bert']}", "encoder.batch_size=-3",
                       "logger=disabled", f"paths.results_dir={tmp_path / 'results'}",
                       f"paths.cache_dir={tmp_path / 'cache'}"], cwd=REPO,
                      timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and lines == ["error: config: encoder.batch_size expected an integer >= 1, found -3"]
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_a_run_directory_from_before_cache_dtype_still_resumes_and_fp32_is_another_run(tmp_path):
    from elmo_bench.engine.run_identity import check_run_dir
    from elmo_bench.engine.run_records import RUN_FILE
    from tests.test_encoder_identity import _identity

    current, made = _identity(tmp_path)
    assert current["encoder.cache_dtype"] == "fp16"
    run = tmp_path / "run"
    run.mkdir()
    stored = {k: v for k, v in current.items() if k != "encoder.cache_dtype"}  # written before the key existed
    (run / RUN_FILE).write_text(json.dumps({"identity": stored, "config": made.config()}))
    (run / "checkpoint.pt").write_bytes(b"")  # a run under way (a bare results.json is refused as not ours)
    assert check_run_dir(run, current, made) is False  # the same experiment: resumed, not refused
    wide, wide_made = _identity(tmp_path, "encoder.cache_dtype=fp32")
    with pytest.raises(ConfigError, match=r"encoder.cache_dtype: \"fp16\" → \"fp32\""):
        check_run_dir(run, wide, wide_made)


def test_check_encoder_path_refuses_what_is_not_there_without_loading(tmp_path):
    from elmo_bench.encoders.settings import check_encoder_path, path_like

    assert not path_like("bert-base-cased") and not path_like("google/electra-base-discriminator")
    assert path_like("./bert") and path_like("~/m") and path_like("/m") and path_like("a/b/c")
    check_encoder_path({"kind": "transformers", "path": "bert-base-cased"})  # a hub name: the hub decides
    check_encoder_path({"kind": "transformers", "path": str(tmp_path)})
    for spec, message in [({"kind": "transformers", "path": str(tmp_path / "no")}, "no such directory"),
                          ({"kind": "hdf5", "path": str(tmp_path / "x.hdf5")}, "no such file"),
                          ({"kind": "manylangs", "path": str(tmp_path / "m")}, "no such directory")]:
        with pytest.raises(ConfigError, match=rf"encoder.path {spec['path']}: {message}"):
            check_encoder_path(spec)


@pytest.mark.parametrize("command", ["probe-pos", "probe-mdl", "probe-structural"])
def test_the_probe_commands_vet_the_encoder_on_the_first_training_sentence(models, tmp_path, capsys, command):
    """The probes go through the run's check: a tokenizer that makes most of the first training sentence unknown is
    one line, exit 2, before any layer is computed or cached."""
    from elmo_bench.commands.main import main

    data = tmp_path / "ewt"
    data.mkdir()
    words = ["漢字", "テスト", "ä€", "a"]
    sentence = "\n".join(f"{k + 1}\t{w}\t_\tX\tNN\t_\t{0 if k == 0 else 1}\t{'root' if k == 0 else 'dep'}\t_\t_"
                         for k, w in enumerate(words)) + "\n\n"
    other = sentence.replace("\ta\t", "\tb\t")       # dev and test: other sentences (a copy of train is refused)
    for split, text, copies in (("train", sentence, 1000), ("dev", other, 1), ("test", other.replace("テスト", "試験"), 1)):
        (data / f"en_ewt-ud-{split}.conllu").write_text(text * copies)    # probe-mdl's blocks need 1,000 sentences
    cache = tmp_path / "cache"
    assert main([command, "--encoder", "transformers", "--model", str(models["bert"]), "--data-dir", str(data),
                 "--cache-dir", str(cache), "--no-progress"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip() and not line.startswith("Loading")]
    assert len(err) == 1 and "3 of the 4 words of the first training sentence" in err[0]   # (transformers' bar aside)
    assert not cache.exists() or not any(cache.rglob("meta.json"))


def test_a_tokenizer_json_without_its_tokenizer_config_is_refused_not_loaded_as_another_class(models, tmp_path):
    # issue 45: BertTokenizer was built around the cased vocabulary and lowercased it: other ids, exit 0
    loose = _copy(models["bert"], tmp_path / "loose")
    (loose / "tokenizer_config.json").unlink()
    with pytest.raises(ConfigError, match=r"has tokenizer.json but no tokenizer_config.json: the tokenizer class "
                                          r"it was saved with is unknown") as caught:
        TransformersEncoder(str(loose))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", ["model.safetensors", "pytorch_model.bin"])
def test_truncated_weights_are_one_line_naming_the_file(models, tmp_path, name):
    cut = _copy(models["bert"], tmp_path / "cut")
    if name == "pytorch_model.bin":  # the same weights as torch.save writes them
        from safetensors.torch import load_file

        torch.save(load_file(cut / "model.safetensors"), cut / name)
        (cut / "model.safetensors").unlink()
    data = (cut / name).read_bytes()
    (cut / name).write_bytes(data[: len(data) // 2])
    with pytest.raises(ConfigError, match=rf"{cut / name}: cannot be read \(.*truncated or corrupt") as caught:
        TransformersEncoder(str(cut))
    assert "\n" not in str(caught.value)
