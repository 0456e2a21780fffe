"""Issue 46 on tiny random GPT-2, Llama and Qwen2-style models built offline (tests/hf_tiny.py): only the layers
asked for (bit-identical to ``output_hidden_states``, the last one after the final norm, later blocks not run),
weights in bfloat16, passes bounded by subword tokens, pooling chosen by the model's behaviour, and default
identities exactly what the code before the issue gave."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
import torch

pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")

from elmo_bench.base.errors import ConfigError  # noqa: E402
from elmo_bench.encoders.layer_select import layer_indices  # noqa: E402
from elmo_bench.encoders.protocol import cache_id  # noqa: E402
from elmo_bench.encoders.settings import check_encoder_settings  # noqa: E402
from elmo_bench.encoders.transformers.encoder import TransformersEncoder  # noqa: E402
from elmo_bench.encoders.transformers.hf_forward import find_blocks, token_batches  # noqa: E402
from tests.conftest import REPO  # noqa: E402
from tests.hf_tiny import decoder_models, tiny_models  # noqa: E402

SENTENCES = [["Peters", "trained", "a", "bidirectional", "model", "on", "Paris", "."], ["a"],
             ["Mixing", "the", "layers", "of", "a", "deep", "model", "helps", "question", "answering", "."]]
#: the commit before issue 46: its encoder gives today's identities
BASE = "b87d149"


@pytest.fixture(scope="module")
def models():
    return {**tiny_models(), **decoder_models()}


def _hand_states(directory, words, dtype=torch.float32):
    """The model of ``directory`` run by hand on one pre-split sentence in ``dtype``: (layers, positions, dim) from
    ``output_hidden_states``, the positions of each word, and the output of the last block (hooked)."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory, add_prefix_space=True)
    model = AutoModel.from_pretrained(directory, dtype=dtype).eval()
    batch = tokenizer(words, is_split_into_words=True, return_tensors="pt")
    taken = {}
    find_blocks(model)[-1].register_forward_hook(lambda m, a, out: taken.setdefault("block", out))
    with torch.no_grad():
        states = torch.stack(model(**batch, output_hidden_states=True).hidden_states, dim=1)[0]
    block = taken["block"][0] if isinstance(taken["block"], tuple) else taken["block"]
    return states, batch.word_ids(0), block[0]


@pytest.mark.parametrize("kind, dtype", [("gpt2", "float32"), ("llama", "float32"), ("qwen2", "float32"),
                                         ("llama", "bfloat16")])
def test_a_subset_is_bit_identical_to_the_same_indices_of_output_hidden_states(models, kind, dtype):
    full = TransformersEncoder(str(models[kind]), dtype=dtype)
    last = full.total_layers - 1
    asked = [last, 0, 1]  # the model's indices, in the order asked; the last after the final norm
    subset = TransformersEncoder(str(models[kind]), dtype=dtype, layers=asked)
    assert subset.num_layers == 3 and subset.identity()["encoder_layer_indices"] == asked
    everything, _ = full.layers(SENTENCES)
    kept, mask = subset.layers(SENTENCES)
    assert kept.dtype == torch.float32 and torch.equal(kept, everything[:, asked])
    assert any(subset._hooks_checked.values())  # the hooks, not the full pass, gave them
    states, word_ids, block = _hand_states(models[kind], SENTENCES[0], getattr(torch, dtype))
    alone, _ = subset.layers(SENTENCES[:1])  # the same single window as the hand-made pass
    for word in range(len(SENTENCES[0])):  # pooling last (a causal model): the word's last subword
        position = max(p for p, w in enumerate(word_ids) if w == word)
        assert torch.equal(alone[0, :, word], states[asked, position].float())
    assert not torch.equal(block, states[last])  # a hook on the last block misses the final norm


def test_blocks_after_the_deepest_requested_one_never_run(models):
    encoder = TransformersEncoder(str(models["llama"]), layers=[0, 1])
    encoder.layers(SENTENCES[:1])  # the one-off check of the hooks runs the whole model once
    calls = [0, 0, 0]
    for index, block in enumerate(find_blocks(encoder.model)):
        block.register_forward_hook(lambda m, a, out, i=index: calls.__setitem__(i, calls[i] + 1))
    encoder.layers(SENTENCES)
    assert calls[0] >= 1 and calls[1:] == [0, 0]  # index 1 is block 1's input: blocks 1 and 2 are not run


def test_every_k_and_the_refused_layer_lists():
    assert layer_indices("every:2", 5) == (0, 2, 4) and layer_indices("every:3", 5) == (0, 3, 4)
    assert layer_indices([0, 1, 2, 3, 4], 5) is None and layer_indices(None, 5) is None  # all: today's entry
    assert layer_indices([3, 0], 5) == (3, 0)
    for value, message in [([0, 0], "names layer 0 more than once"), ([], "is an empty list"),
                           ([5], "names layer 5, outside"), ("every:0", "expected every:K with K >= 1"),
                           ([-1], "integers >= 0"), ("top", "expected a list of layer indices")]:
        with pytest.raises(ConfigError, match=message) as caught:
            layer_indices(value, 5)
        assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="encoder.layers names layer 2 more than once"):
        check_encoder_settings({"kind": "transformers", "path": "x", "layers": [2, 2]})


def _base_encoder_class():
    """TransformersEncoder as the commit before issue 46 wrote it (its module source from git)."""
    try:
        source = subprocess.run(["git", "show", f"{BASE}:elmo_bench/encoders/transformers.py"], cwd=REPO,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"git or commit {BASE} is not available here")
    spec = importlib.util.spec_from_loader("base_transformers_encoder", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    exec(compile(source, "base_transformers.py", "exec"), module.__dict__)
    return module.TransformersEncoder


@pytest.mark.parametrize("kind", ["bert", "roberta"])
def test_an_encoder_only_models_default_identity_and_cache_key_are_the_ones_before_the_issue(models, kind):
    before = _base_encoder_class()(str(models[kind]))
    now = TransformersEncoder(str(models[kind]))  # pooling auto -> first, every layer, float32
    assert now.causal is False and now.pooling == "first"
    assert now.identity() == before.identity() and cache_id(now) == cache_id(before)
    assert cache_id(TransformersEncoder(str(models[kind]), layers=[0, 1, 2])) == cache_id(before)  # all, spelled out
    for other in (dict(layers=[0, 2]), dict(dtype="bfloat16"), dict(layers="every:2", dtype="float16")):
        assert cache_id(TransformersEncoder(str(models[kind]), **other)) != cache_id(before)
    torch.testing.assert_close(now.layers(SENTENCES)[0], before.layers(SENTENCES)[0], rtol=0, atol=0)


@pytest.mark.parametrize("kind, causal", [("gpt2", True), ("llama", True), ("qwen2", True), ("bert", False),
                                          ("roberta", False)])
def test_pooling_auto_is_last_for_a_model_that_behaves_causally_and_an_explicit_pooling_wins(models, kind, causal):
    encoder = TransformersEncoder(str(models[kind]))
    assert encoder.causal is causal and encoder.pooling == ("last" if causal else "first")
    assert encoder.extras()["pooling_asked"] == "auto" and encoder.extras()["causal"] is causal
    assert ("causal" in encoder.identity()) is causal
    explicit = TransformersEncoder(str(models[kind]), pooling="mean")
    assert explicit.pooling == "mean" and explicit.identity()["pooling"] == "mean"


def test_gpt2_saved_as_not_a_decoder_is_still_found_causal(models):
    saved = json.loads((models["gpt2"] / "config.json").read_text())
    assert not saved.get("is_decoder", False)  # the flag would say bidirectional
    assert TransformersEncoder(str(models["gpt2"])).causal is True


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_max_tokens_gives_the_layers_of_unbounded_passes_and_bounds_every_pass(models, kind):
    unbounded = TransformersEncoder(str(models[kind]))
    bounded = TransformersEncoder(str(models[kind]), max_tokens=64)
    seen = []
    bounded.model.register_forward_pre_hook(lambda m, a, k: seen.append(k["input_ids"].numel()), with_kwargs=True)
    many = SENTENCES * 4
    expected, _ = unbounded.layers(many)
    got, _ = bounded.layers(many)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    assert len(seen) > 1 and max(seen) <= 64
    assert bounded.identity() == unbounded.identity()  # a bound on memory, not another encoder
    with pytest.raises(ConfigError, match="encoder.max_tokens 16 is smaller than the model window \\(64 tokens\\)"):
        TransformersEncoder(str(models[kind]), max_tokens=16)


def test_token_batches_fill_passes_by_padded_tokens_shortest_first():
    assert token_batches([5, 2, 9, 3], 10, 32) == [[1, 3], [0], [2]]
    assert token_batches([5, 2, 9, 3], None, 3) == [[0, 1, 2], [3]]  # today's batching without max_tokens


def test_bfloat16_weights_on_the_cpu_are_recorded_and_layers_come_back_float32(models):
    encoder = TransformersEncoder(str(models["qwen2"]), dtype="bfloat16")
    assert next(encoder.model.parameters()).dtype == torch.bfloat16
    ident = encoder.identity()
    assert ident["dtype"] == "bfloat16" and ident["precision"] == "bf16"
    layers, _ = encoder.layers(SENTENCES)
    exact, _ = TransformersEncoder(str(models["qwen2"])).layers(SENTENCES)
    assert layers.dtype == torch.float32 and not torch.equal(layers, exact)
    torch.testing.assert_close(layers, exact, rtol=0.1, atol=0.1)
    with pytest.raises(ConfigError, match="encoder.dtype expected one of float32, bfloat16, float16"):
        TransformersEncoder(str(models["qwen2"]), dtype="int8")


def _embed(tmp_path, name, *flags):
    """``elmo-bench embed`` of SENTENCES into tmp_path/name; (exit code, path)."""
    from elmo_bench.commands.main import main

    (tmp_path / "in.txt").write_text("\n".join(" ".join(s) for s in SENTENCES) + "\n")
    out = tmp_path / name
    return main(["embed", "--input", str(tmp_path / "in.txt"), "--output", str(out), "--device", "cpu",
                 *flags]), out


def test_embed_layers_writes_the_requested_layers_in_order_float32_whatever_the_dtype(models, tmp_path):
    import h5py

    model = ["--encoder", "transformers", "--model", str(models["llama"])]
    assert _embed(tmp_path, "all.hdf5", *model)[0] == 0
    code, chosen = _embed(tmp_path, "some.hdf5", *model, "--layers", "3,0")
    assert code == 0
    code, half = _embed(tmp_path, "bf16.hdf5", *model, "--layers", "every:2", "--dtype", "bfloat16",
                        "--max-tokens", "64")
    assert code == 0
    with h5py.File(tmp_path / "all.hdf5", "r") as every, h5py.File(chosen, "r") as some, \
            h5py.File(half, "r") as rounded:
        assert "layer_indices" not in every.attrs  # --layers all: the file as before
        assert list(some.attrs["layer_indices"]) == [3, 0] and list(rounded.attrs["layer_indices"]) == [0, 2, 3]
        for i, sentence in enumerate(SENTENCES):
            full = every[str(i)][()]
            assert some[str(i)].shape == (2, len(sentence), 32) and some[str(i)].dtype == "float32"
            assert (some[str(i)][()] == full[[3, 0]]).all()
            assert rounded[str(i)].dtype == "float32" and rounded[str(i)].shape == (3, len(sentence), 32)
            assert not (rounded[str(i)][()] == full[[0, 2, 3]]).all()  # it did run in bfloat16
    from elmo_bench.encoders.hdf5 import Hdf5Encoder

    read = Hdf5Encoder(chosen)  # encoder=hdf5 reads the subset and names its layers by their model indices
    assert read.num_layers == 2 and read.identity()["encoder_layer_indices"] == [3, 0]
    assert "encoder_layer_indices" not in Hdf5Encoder(tmp_path / "all.hdf5").identity()  # as before the issue


@pytest.mark.parametrize("flags, message", [
    (["--layers", "0,0"], "--layers names layer 0 more than once"),
    (["--layers", "0,9"], "names layer 9, outside gpt2 (3 layers)"),
    (["--layers", "first"], "--layers expected a list of layer indices"),
    (["--dtype", "bfloat16", "--encoder", "bilm"], "--dtype applies to --encoder transformers only"),
    (["--max-tokens", "8"], "encoder.max_tokens 8 is smaller than the model window"),
])
def test_embed_refuses_bad_layers_dtype_and_max_tokens_in_one_line(models, tmp_path, capsys, flags, message):
    model = [] if "bilm" in flags else ["--encoder", "transformers", "--model", str(models["gpt2"])]
    code, out = _embed(tmp_path, "out.hdf5", *model, *flags)
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_a_run_made_before_the_issue_still_matches_and_auto_is_compared_as_the_pooling_it_chose(models, tmp_path,
                                                                                              caplog):
    import logging

    from tests.test_encoder_transformers import _run

    caplog.set_level(logging.INFO)
    overrides = ("embedder=elmo", "encoder=transformers", f"encoder.path={models['bert']}")
    _run(tmp_path, "run", *overrides)
    record = tmp_path / "run" / "run.json"
    made = json.loads(record.read_text())
    assert made["identity"]["encoder.pooling"] == "first"  # auto, as it resolved on an encoder-only model
    for key in ("encoder.layers", "encoder.dtype", "encoder.max_tokens"):  # as a run.json of before the issue
        made["identity"].pop(key)
    record.write_text(json.dumps(made))
    caplog.clear()
    _run(tmp_path, "run", *overrides)
    assert "nothing to do" in caplog.text
    with pytest.raises(ConfigError, match="encoder.layers"):  # another layer set is another run
        _run(tmp_path, "run", *overrides, "encoder.layers=[0,2]")


def test_a_dtype_the_device_cannot_run_is_one_line(models, monkeypatch):
    import elmo_bench.encoders.transformers.encoder as module

    def no_kernel(*args, **kwargs):
        raise RuntimeError('"addmm_impl_cpu_" not implemented for \'Half\'\nsecond line')

    monkeypatch.setattr(module, "is_causal", no_kernel)
    expected = (r"encoder.dtype=float16: bert cannot run in float16 on cpu \(RuntimeError: \"addmm_impl_cpu_\" not "
                r"implemented .*choose another encoder.dtype")
    with pytest.raises(ConfigError, match=expected) as caught:
        TransformersEncoder(str(models["bert"]), dtype="float16")
    assert "\n" not in str(caught.value)


def test_the_cache_keeps_only_the_requested_layers_under_a_key_of_their_own(models, tmp_path):
    from elmo_bench.encoders.cache import ActivationCache

    full = ActivationCache(tmp_path, TransformersEncoder(str(models["qwen2"])), progress=False)
    subset = ActivationCache(tmp_path, TransformersEncoder(str(models["qwen2"]), layers=[3, 1]), progress=False)
    assert full.key(SENTENCES) != subset.key(SENTENCES)
    everything, kept = full.layers(SENTENCES), subset.layers(SENTENCES)
    assert kept.num_layers == 2 and kept.data.shape[1:] == (2, 32)  # only the two layers are stored
    assert kept.meta["encoder_facts"]["encoder_layer_indices"] == [3, 1] and kept.meta["encoder_facts"]["causal"]
    for i in range(len(SENTENCES)):
        assert (kept.get(i) == everything.get(i)[[3, 1]]).all()


def test_plans_cache_bytes_are_the_bytes_a_real_extraction_of_a_layer_subset_writes(models, tmp_path, capsys):
    from elmo_bench.commands.main import main
    from tests.test_encoder_transformers import _run

    overrides = ["embedder=elmo", "encoder=transformers", f"encoder.path={models['llama']}", "encoder.layers=every:2"]
    _run(tmp_path, "run", *overrides)
    written = sum(p.stat().st_size for p in (tmp_path / "cache").glob("*/layers.f16"))
    assert main(["plan", "task=ner", "data=ner_sample", *overrides, "--format", "json", "--sample-batches", "1"]) == 0
    planned = json.loads(capsys.readouterr().out)["runs"][0]
    assert planned["encoder_layer_indices"] == [0, 2, 3]
    assert abs(planned["cache_bytes"] - written) <= 0.05 * written, (planned["cache_bytes"], written)


def test_a_random_twin_keeps_the_layer_subset_and_the_dtype(models):
    from elmo_bench.encoders.random_init import randomise

    twin = randomise(TransformersEncoder(str(models["llama"]), layers=[0, 1], dtype="bfloat16"), "all", 3)
    whole = randomise(TransformersEncoder(str(models["llama"]), dtype="bfloat16"), "all", 3)
    assert next(twin.model.parameters()).dtype == torch.bfloat16
    assert twin.identity()["random_init"] == "all" and twin.identity()["encoder_layer_indices"] == [0, 1]
    kept, _ = twin.layers(SENTENCES)
    assert torch.equal(kept, whole.layers(SENTENCES)[0][:, [0, 1]])
    trained, _ = TransformersEncoder(str(models["llama"]), layers=[0, 1], dtype="bfloat16").layers(SENTENCES)
    assert not torch.equal(kept, trained)


@pytest.mark.parametrize("spec", [{"kind": "bilm", "layers": [0, 1]},
                                  {"kind": "hdf5", "path": "f", "dtype": "float16"},
                                  {"kind": "manylangs", "path": "d", "max_tokens": 512}])
def test_a_large_model_key_on_a_kind_that_does_not_read_it_is_one_line_not_ignored(spec):
    key = next(k for k in ("layers", "dtype", "max_tokens") if k in spec)
    with pytest.raises(ConfigError, match=rf"encoder.{key} applies to encoder=transformers only \(found "
                                          rf"encoder={spec['kind']}\)"):
        check_encoder_settings(spec)
    check_encoder_settings({**spec, key: None})  # unset: nothing to refuse


def test_the_record_of_a_subset_holds_the_models_layer_count_and_the_identity_does_not(models):
    """results.json's encoder block names the model's hidden-state count when encoder.layers kept a subset, so that
    relative depth is l / L even for a list that stops short of the last layer; the identity (the cache key) and the
    record of all layers stay as they were."""
    from elmo_bench.encoders.build import encoder_record

    short = TransformersEncoder(str(models["llama"]), layers=[0, 1])
    total = short.total_layers
    assert total > 2 and encoder_record(short)["model_layers"] == total
    assert "model_layers" not in short.identity() and cache_id(short) == cache_id(
        TransformersEncoder(str(models["llama"]), layers=[0, 1]))
    assert "model_layers" not in encoder_record(TransformersEncoder(str(models["llama"])))
