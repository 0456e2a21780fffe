"""scripts/gpu_check.sh's pieces on the CPU, cheaply: the biLM throughput step on a tiny random biLM (its FLOPs are
the plan's formula over the positions it ran), a paper-size head's timed steps, the plan-vs-measured arithmetic,
and the script's syntax. The whole dry run (``DEVICE=cpu scripts/gpu_check.sh``) runs the quickstart, tests and
a plan: minutes on a shared CPU, so it is not a test; these pieces are what it calls."""
from __future__ import annotations

import importlib.util
import json
import subprocess

import pytest
import torch

from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.encoders.costs import bilm_flops_per_position
from tests.conftest import REPO, needs_data
from tests.test_plan import TINY

spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_check)


def test_bilm_step_counts_the_plan_formula_over_the_positions_it_ran() -> None:
    result = gpu_check.bilm_check(torch.device("cpu"), 6, options=TINY)
    text = gpu_check.sentences(6)
    assert result["tokens"] == sum(len(s) for s in text) and result["positions"] == result["tokens"] + 2 * 6
    per = bilm_flops_per_position(BiLMOptions.from_dict(TINY))
    assert result["flops_per_position"] == per == 9_104
    assert result["achieved_tflops"] == pytest.approx(per * result["positions"] / result["seconds"] / 1e12)
    assert result["tokens_per_second"] == pytest.approx(result["tokens"] / result["seconds"])
    assert result["mfu"] is None and result["peak_tflops"] is None            # no GPU peak on a CPU


def test_head_step_times_paper_size_training_steps() -> None:
    result = gpu_check.head_check(torch.device("cpu"), "ner", "off", steps=1, data="ner_sample")
    assert result["steps"] == 1 and result["batch_size"] == 32 and result["finite_losses"]
    assert result["train_flops_per_token"] > 1e6 and result["peak_memory_bytes"] > 0


def test_compare_prices_the_plan_against_the_measured_rates() -> None:
    # plan at 1 TFLOP/s: one epoch 2e12 FLOPs = 2 s, the cache 4e12 FLOPs = 4 s; measured: 1,000 tokens at
    # 250 tokens/s = 4 s (twice the plan), the biLM at 2 TFLOP/s = 2 s (half the plan)
    plan = {"gpu_tflops": 1.0, "runs": [{"task": "ner", "embedder": "glove_elmo", "tokens": 1000,
                                         "train_flops_per_epoch": 2e12, "bilm_flops": 4e12,
                                         "peak_memory_bytes": 5}]}
    head = {"task": "ner", "tokens_per_second": 250.0, "achieved_tflops": 0.5, "peak_memory_bytes": 6}
    out = gpu_check.compare({"achieved_tflops": 2.0}, head, plan)
    assert out["train_epoch"]["planned_seconds"] == pytest.approx(2.0)
    assert out["train_epoch"]["ratio_measured_to_planned"] == pytest.approx(2.0)
    assert out["bilm"]["measured_seconds"] == pytest.approx(2.0)
    assert out["bilm"]["ratio_measured_to_planned"] == pytest.approx(0.5)


def test_gpu_check_script_parses() -> None:
    assert subprocess.run(["bash", "-n", str(REPO / "scripts" / "gpu_check.sh")]).returncode == 0


large_spec = importlib.util.spec_from_file_location("gpu_check_large", REPO / "scripts" / "gpu_check_large.py")
gpu_check_large = importlib.util.module_from_spec(large_spec)
large_spec.loader.exec_module(gpu_check_large)


def test_the_large_step_builds_a_1b_model_and_a_tiny_one_that_the_encoder_reads_at_every_4th_layer(tmp_path) -> None:
    """The 1b size is about 1.1B parameters (counted on the meta device: nothing allocated); the tiny size, built
    and saved as the step builds it, is read by encoder=transformers at layers 0, 4, 8 in bfloat16, causal; the
    tiny data cut keeps the first sentences of each split and their words."""
    pytest.importorskip("transformers")
    from transformers import LlamaConfig, LlamaModel

    from elmo_bench.encoders.transformers.encoder import TransformersEncoder

    with torch.device("meta"):
        big = LlamaModel(LlamaConfig(vocab_size=8000, **gpu_check_large.SIZES["1b"]["model"]))
    assert sum(p.numel() for p in big.parameters()) == 1_098_614_784
    source = tmp_path / "ewt"
    source.mkdir()
    block = "# sent_id = {0}\n1\tA{0}\ta\tDET\tDT\t_\t2\tdet\t_\t_\n2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n2\tdo\tdo\tAUX\tVBP\t_\t0" \
            "\troot\t_\t_\n3\tn't\tnot\tPART\tRB\t_\t2\tadvmod\t_\t_\n"
    for split in ("train", "dev", "test"):
        (source / f"en_ewt-ud-{split}.conllu").write_text("\n".join(block.format(i) for i in range(5)) + "\n")
    cut = gpu_check_large.cut_ewt(source, tmp_path / "cut", {"train": 3, "dev": 2, "test": 1})
    blocks = gpu_check_large.conllu_blocks(cut / "en_ewt-ud-train.conllu")
    assert len(blocks) == 3 and gpu_check_large.words_of(blocks[2]) == ["A2", "do", "n't"]
    lines = [" ".join(gpu_check_large.words_of(b)) for b in blocks] + ["the committee said on tuesday"] * 20
    built = gpu_check_large.build_model(tmp_path / "tiny", "tiny", lines, torch.device("cpu"))
    assert built["blocks"] == 8 and built["hidden"] == 64
    encoder = TransformersEncoder(str(tmp_path / "tiny"), layers="every:4", dtype="bfloat16")
    assert encoder.identity()["encoder_layer_indices"] == [0, 4, 8] and encoder.causal and encoder.pooling == "last"
    assert encoder.layers([["A0", "do", "n't"]])[0].shape == (1, 3, 3, 64)


@needs_data
def test_the_large_step_runs_whole_at_the_tiny_size_with_its_streamed_probe(tmp_path) -> None:
    """gpu_check.sh's large step as it runs on a GPU, at the tiny size on the CPU (UD EWT's first sentences): the
    encoder record says every 4th layer in bfloat16, causal, last-subword pooling; the extraction is timed; the POS
    probe and the streamed ridge probe (probe.stream=true, batches within probe.batch_tokens) give every kept
    layer's test accuracy."""
    pytest.importorskip("transformers")
    out = tmp_path / "large.json"
    assert gpu_check_large.main(["--device", "cpu", "--size", "tiny", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["encoder"]["encoder_layer_indices"] == [0, 4, 8] and result["encoder"]["dtype"] == "bfloat16"
    assert result["encoder"]["causal"] is True and result["encoder"]["pooling"] == "last"
    assert result["sentences"] == 200 and result["subword_tokens"] > result["words"] > 0
    assert result["tokens_per_second"] > 0 and result["peak_gpu_memory_bytes"] is None
    streamed = result["streamed_probe"]
    assert streamed["stream"] is True and 0 < streamed["largest_batch"] <= 4096
    layers = {"layer_0", "layer_4", "layer_8"}
    assert layers <= set(streamed["test_accuracy"]) and layers <= set(result["probe_test_accuracy"])
    assert all(0 <= streamed["test_accuracy"][k] <= 100 for k in layers)
