"""Issue 58 item 3: a transformers encoder spread over devices by Hugging Face accelerate (``encoder.device_map``,
``encoder.max_memory``, ``encoder.offload_folder``), on this CPU: a tiny random Llama (tests/hf_tiny.py) split
between the CPU and accelerate's disk offload gives hidden states bit-identical to the model loaded whole (every
layer, a layer subset through the block hooks, mean pooling, its random twin, an eraser inside the forward pass);
identity and activation-cache key are the run's without a map; the refusals are one line before any weight is
read; ``plan`` prices a config-only Llama-3-70B per device on 1xH200, 2xH100 and 8xH100."""
from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
import torch

pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")
pytest.importorskip("accelerate", reason="accelerate is not installed (pip install -e '.[dev]')")

from elmo_bench.base.errors import ConfigError  # noqa: E402
from elmo_bench.encoders.protocol import cache_id  # noqa: E402
from elmo_bench.encoders.settings import check_encoder_settings  # noqa: E402
from elmo_bench.encoders.transformers.encoder import TransformersEncoder  # noqa: E402
from elmo_bench.encoders.transformers.placement import device_map, max_memory  # noqa: E402
from tests.conftest import REPO  # noqa: E402
from tests.hf_tiny import decoder_models  # noqa: E402

SENTENCES = [["Peters", "trained", "a", "bidirectional", "model", "on", "Paris", "."], ["a"],
             ["Mixing", "the", "layers", "of", "a", "deep", "model", "helps", "question", "answering", "."]]
#: the tiny Llama's three blocks: the first on the CPU, the last two offloaded to disk (run on the CPU, weights
#: read from the offload folder at each pass)
SPLIT = {"embed_tokens": "cpu", "layers.0": "cpu", "layers.1": "disk", "layers.2": "disk", "norm": "cpu",
         "rotary_emb": "cpu"}
OVERRIDE = "encoder.device_map={" + ",".join(f"{k}:{v}" for k, v in SPLIT.items()) + "}"


@pytest.fixture(scope="module")
def llama():
    return str(decoder_models()["llama"])


@pytest.mark.parametrize("settings", [{}, {"layers": [0, 1]}, {"layers": [2, 0], "pooling": "mean"}],
                         ids=["every layer", "a subset through the hooks", "mean pooling"])
def test_a_model_split_over_cpu_and_disk_gives_bit_identical_states(llama, tmp_path, settings):
    whole = TransformersEncoder(llama, **settings)
    spread = TransformersEncoder(llama, device_map=SPLIT, offload_folder=str(tmp_path), **settings)
    assert spread.model.hf_device_map == SPLIT
    assert any(p.device.type == "meta" for p in spread.model.parameters())  # the disk's blocks hold no weights
    assert torch.equal(whole.packed_layers(SENTENCES), spread.packed_layers(SENTENCES))
    assert torch.equal(whole.layers(SENTENCES)[0], spread.to("cpu").layers(SENTENCES)[0])  # to(): the map stays
    assert spread.identity() == whole.identity() and cache_id(spread) == cache_id(whole)


def test_a_strategy_with_max_memory_loads_and_gives_the_same_states(llama):
    whole = TransformersEncoder(llama, layers=[1, 3])
    auto = TransformersEncoder(llama, layers=[1, 3], device_map="auto", max_memory={"cpu": "1GB"})
    assert torch.equal(whole.packed_layers(SENTENCES), auto.packed_layers(SENTENCES))


def test_a_random_twin_and_an_eraser_combine_with_a_device_map(llama, tmp_path):
    """Tested, not refused: the random twin (built from the config) is spread as its trained model was, with its
    own offload files; an eraser's hook on block k runs on a block whose weights are on disk."""
    from elmo_bench.encoders.random_init import randomise
    from elmo_bench.encoders.transformers.erase import install_hook

    whole = randomise(TransformersEncoder(llama), "all", 3)
    spread = randomise(TransformersEncoder(llama, device_map=SPLIT, offload_folder=str(tmp_path)), "all", 3)
    assert spread.model.hf_device_map == SPLIT and (tmp_path / "random-all-3").is_dir()
    assert torch.equal(whole.packed_layers(SENTENCES), spread.packed_layers(SENTENCES))
    eraser = SimpleNamespace(layer=1, streams=[lambda hidden: 0.5 * hidden + 1.0])
    plain = TransformersEncoder(llama)
    before = plain.packed_layers(SENTENCES)
    erased = [TransformersEncoder(llama), TransformersEncoder(llama, device_map=SPLIT, offload_folder=str(tmp_path))]
    for encoder in erased:
        install_hook(encoder, eraser)
    after = [encoder.packed_layers(SENTENCES) for encoder in erased]
    assert torch.equal(after[0], after[1]) and torch.equal(after[0][:, 0], before[:, 0])
    assert not torch.equal(after[0][:, 2], before[:, 2])


@pytest.mark.parametrize("spec, message", [
    ({"device_map": "everywhere"}, "encoder.device_map expected one of auto, balanced, balanced_low_0, sequential"),
    ({"device_map": {"layers.0": "gpu7"}}, r"encoder.device_map\['layers.0'\] expected a device"),
    ({"device_map": "auto", "max_memory": {"0": "80Gb"}}, r"max_memory\['0'\] expected a size such as 80GB"),
    ({"device_map": "auto", "max_memory": {"disk": "1GB"}}, "max_memory names disk"),
    ({"device_map": {"": 0}, "max_memory": {"0": "1GB"}}, "max_memory applies with encoder.device_map=auto"),
    ({"max_memory": {"0": "1GB"}}, "max_memory applies with encoder.device_map"),
    ({"offload_folder": "/tmp/x"}, "offload_folder applies with encoder.device_map"),
    ({"kind": "hdf5", "path": "x.h5", "device_map": "auto"}, "encoder.device_map applies to encoder=transformers"),
])
def test_bad_placement_settings_are_one_line_at_the_door(spec, message):
    with pytest.raises(ConfigError, match=message) as caught:
        check_encoder_settings({"kind": "transformers", "path": "DIR", **spec})
    assert "\n" not in str(caught.value)


def test_the_forms_a_placement_takes():
    assert device_map({"device_map": '{"layers.0": "cuda:1", "norm": "0", "x": "disk"}'}) == {
        "layers.0": 1, "norm": 0, "x": "disk"}
    assert max_memory({"max_memory": {0: "70GiB", "cpu": "1.5GB", "1": 1000}}) == {
        0: 70 * 2 ** 30, 1: 1000, "cpu": 1_500_000_000}


def test_a_missing_device_and_too_small_a_max_memory_are_refused_before_any_weight_is_read(llama, monkeypatch,
                                                                                           tmp_path):
    import elmo_bench.encoders.transformers.encoder as module

    def no_loading(*args, **kwargs):
        raise AssertionError("weights read before the refusal")

    monkeypatch.setattr(module, "_load_model", no_loading)
    with pytest.raises(ConfigError, match=r"encoder.device_map names device 3, which does not exist here"):
        TransformersEncoder(llama, device_map={**SPLIT, "layers.2": 3})
    with pytest.raises(ConfigError, match=r"encoder.max_memory names device 99, which does not exist here"):
        TransformersEncoder(llama, device_map="auto", max_memory={"99": "1GB"})
    with pytest.raises(ConfigError, match="puts modules on disk; set encoder.offload_folder"):
        TransformersEncoder(llama, device_map=SPLIT)
    with pytest.raises(ConfigError, match=r"max_memory holds 10.00 KB in all, llama's weights need 162.69 KB "
                                          r"\(40,672 parameters x 4 bytes in float32\): short by 152.69 KB; raise "
                                          r"max_memory, add a device, or set encoder.offload_folder") as caught:
        TransformersEncoder(llama, device_map="auto", max_memory={"cpu": "10KB"})
    assert "\n" not in str(caught.value)


def test_a_run_with_a_device_map_is_nothing_to_do_after_the_same_run_without(llama, tmp_path, caplog):
    from tests.test_encoder_transformers import _run

    caplog.set_level(logging.INFO)
    overrides = ("embedder=elmo", "encoder=transformers", f"encoder.path={llama}", "encoder.layers=[0,2]")
    spread = (OVERRIDE, f"encoder.offload_folder={tmp_path / 'offload'}")
    _run(tmp_path, "run", *overrides)
    caplog.clear()
    _run(tmp_path, "run", *overrides, *spread)
    assert "nothing to do" in caplog.text
    caplog.clear()
    _run(tmp_path, "other", *overrides, *spread)  # another run directory: the same activation cache entry
    assert "activation cache hit" in caplog.text and "activation cache miss" not in caplog.text


def test_a_run_naming_a_device_that_does_not_exist_exits_2_with_one_line_and_writes_nothing(llama, tmp_path):
    from tests.warm_python import run_python

    results = tmp_path / "results"
    done = run_python(["run.py", "task=ner", "data=ner_sample", "embedder=elmo", "encoder=transformers",
                       f"encoder.path={llama}", "encoder.device_map={embed_tokens:7,layers:cpu,norm:cpu}",
                       f"paths.results_dir={results}", f"paths.cache_dir={tmp_path / 'cache'}",
                       "logger=disabled"], cwd=REPO, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1].startswith("error: config: encoder.device_map names device 7")
    assert [p for p in results.rglob("*") if p.is_file()] == [] if results.exists() else True


#: the cards' memory as nvidia-smi reports it (H100 SXM 80 GB: 81,559 MiB; H200: 143,771 MiB), rounded down
H100, H200 = "79GiB", "140GiB"


@pytest.mark.parametrize("cards, tokens, fits", [
    ({0: H100}, 1024, False), ({0: H200}, 1024, True), ({0: H200}, 32 * 128, False),
    ({0: H100, 1: H100}, 32 * 128, True), ({i: H100 for i in range(8)}, 32 * 128, True)],
    ids=["1xH100", "1xH200, 1024 tokens a pass", "1xH200, 32 windows of 128", "2xH100", "8xH100"])
def test_plan_prices_a_config_only_llama_3_70b_per_device(cards, tokens, fits):
    """Llama-3-70B's shape (built on the meta device from its config: no weights), bf16: 139.0 GB of weights in
    the base model plan loads (no LM head). It does not fit one H100; it fits one H200 only with small passes; two
    H100s hold it once the blocks are placed with each card's size less its activations."""
    from transformers import LlamaConfig

    from elmo_bench.commands.plan_table import _device_lines
    from elmo_bench.encoders.transformers.devices import device_rows

    config = LlamaConfig(num_hidden_layers=80, hidden_size=8192, intermediate_size=28672, num_attention_heads=64,
                         num_key_value_heads=8, vocab_size=128256, max_position_embeddings=8192)
    spec = {"dtype": "bfloat16", "device_map": "auto", "max_memory": cards}
    spread = device_rows(config, spec, tokens, 128, list(range(81)))
    assert spread["fits"] is fits
    weights = sum(d["weight_bytes"] for d in spread["devices"])
    assert abs(weights / 1e9 - 139.01) < 0.01  # 69,503,033,344 parameters x 2 bytes, and the rotary buffer
    assert (spread["offloaded_bytes"] > 60e9) is (len(cards) == 1 and cards[0] == H100)
    placed = [d for d in spread["devices"] if d["device"] != "disk"]
    assert len(placed) == len(cards) and all(d["activation_bytes"] > 0 for d in placed)
    if fits:
        assert all(d["weight_bytes"] + d["activation_bytes"] <= d["size_bytes"] for d in placed)
        assert sum(spread["run_max_memory"].values()) < sum(d["size_bytes"] for d in placed)
    lines = _device_lines([{"encoder": "transformers llama70b (config.json)", "encoder_devices": spread}])
    assert lines[0].endswith("fits" if fits else "does not fit") and len(lines) >= 1 + len(cards)


def test_the_gpu_checks_two_device_step_skips_with_one_line_on_fewer_than_two_gpus(monkeypatch, tmp_path, capsys):
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("gpu_check_split", REPO / "scripts" / "gpu_check_split.py")
    split = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(split)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert split.main(["--device", "cuda", "--out", str(tmp_path / "split.json")]) == 0
    assert json.loads((tmp_path / "split.json").read_text()) == {
        "skipped": "1 GPU here: the two-device split needs two"}
    assert capsys.readouterr().out.strip() == "1 GPU here: the two-device split needs two"
