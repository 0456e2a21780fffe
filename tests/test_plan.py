"""``elmo-bench plan``: the biLM FLOP formula against a hand count, the sweep expansion, the JSON contract, the
arithmetic that joins the measured numbers into GPU hours, and the documented sizes for data not readable here."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.bilm.public import public_options
from elmo_bench.commands.compose import expand_sweep
from elmo_bench.commands.main import main
from elmo_bench.data.conll2003 import read_conll
from elmo_bench.encoders.costs import bilm_flops_per_position, segment_positions
from elmo_bench.tasks.registry import declaration
from tests.conftest import REPO, needs_data

CONTRACT = {"task", "embedder", "seed", "train_examples", "tokens", "bilm_flops", "cache_bytes", "head_params",
            "train_flops_per_epoch", "peak_memory_bytes", "epochs", "gpu_hours"}
TINY = {"lstm": {"use_skip_connections": True, "projection_dim": 6, "cell_clip": 3, "proj_clip": 3, "dim": 16,
                 "n_layers": 2},
        "char_cnn": {"activation": "relu", "n_highway": 1, "embedding": {"dim": 4}, "n_characters": 262,
                     "max_characters_per_token": 10, "filters": [[1, 4], [2, 8]]}}


def test_bilm_flops_of_a_tiny_options_json_match_the_hand_count() -> None:
    # C = 10 chars, e = 4, filters (1, 4) and (2, 8) so F = 12, P = 6, H = 16, L = 2, K = 1; 2 FLOPs a multiply-add
    cnn = 2 * (10 - 1 + 1) * 1 * 4 * 4 + 2 * (10 - 2 + 1) * 2 * 4 * 8      # 320 + 1,152 = 1,472
    highway = 1 * 2 * (2 * 12 * 12)                                        # 576
    projection = 2 * 12 * 6                                                # 144
    lstm = 2 * 2 * (2 * (6 + 6) * 4 * 16 + 2 * 16 * 6)                    # 4 * (1,536 + 192) = 6,912
    assert cnn + highway + projection + lstm == 9_104
    assert bilm_flops_per_position(BiLMOptions.from_dict(TINY)) == 9_104


def test_public_elmo_flops_per_token() -> None:
    # char CNN: 16 * 2 * sum((51 - w) * w * n) = 32 * 550,528; highway 2 * 2 * 2 * 2048^2; projection 2 * 2048 * 512;
    # LSTMs 2 layers * 2 directions * (2 * 1024 * 16384 + 2 * 4096 * 512)
    hand = 32 * 550_528 + 8 * 2048 ** 2 + 2 * 2048 * 512 + 4 * (2 * 1024 * 16384 + 2 * 4096 * 512)
    assert hand == 204_263_424
    assert bilm_flops_per_position(BiLMOptions.from_dict(public_options())) == hand


def test_segments_add_their_boundaries() -> None:
    assert segment_positions(300, 256) == 300 + 2 * 2
    assert segment_positions(256, 256) == 258 and segment_positions(0, 256) == 0


def test_sweeps_expand_like_hydra_with_the_command_line_winning() -> None:
    assert len(expand_sweep(["experiment=paper_table1"])) == 6 * 2 * 5
    sliced = expand_sweep(["experiment=paper_table1", "task=srl", "seed=1"])
    assert len(sliced) == 2 and all("task=srl" in job and "seed=1" in job for job in sliced)
    assert len(expand_sweep(["task=ner", "embedder=glove,glove_elmo", "seed=1,2,3"])) == 6
    assert expand_sweep(["task=ner"]) == [["task=ner"]]


def test_plan_json_is_one_object_with_the_contract_keys(capsys) -> None:
    """A tiny sweep (the shipped NER sample and biLM): six runs, sizes read from the files, GPU hours the FLOPs over
    the stated throughput, the shared activation cache counted once in the total."""
    args = ["task=ner", "data=ner_sample", "embedder=glove,glove_elmo", "seed=1,2,3"]
    assert main(["plan", *args, "--format", "json", "--gpu-tflops", "10", "--sample-batches", "1"]) == 0
    result = json.loads(capsys.readouterr().out)                      # the whole stdout is one JSON object
    assert set(result) >= {"runs", "total_gpu_hours"} and len(result["runs"]) == 6
    train = read_conll(REPO / "tasks/ner/samples/sample.train")
    options = BiLMOptions.load(REPO / "elmo_bench/resources/bilm/options.json")
    for run in result["runs"]:
        assert set(run) >= CONTRACT and run["sizes"] == "measured"
        assert (run["task"], run["epochs"]) == ("ner", 10)
        assert run["train_examples"] == len(train) and run["tokens"] == sum(len(e["tokens"]) for e in train)
        assert run["train_flops_per_epoch"] > 0 and run["peak_memory_bytes"] > 0 and run["head_params"] > 0
        flops = run["bilm_flops"] + run["head_flops_total"]
        assert run["gpu_hours"] == pytest.approx(flops / (10e12 * 3600))
        if run["embedder"] == "glove":
            assert run["bilm_flops"] == 0 and run["cache_bytes"] == 0
        else:
            distinct = sum(len(t) for split in ("train", "dev", "test")       # the cache keeps each sentence once
                           for t in {tuple(e["tokens"]) for e in read_conll(REPO / f"tasks/ner/samples/sample.{split}")})
            assert run["cache_bytes"] == distinct * (options.n_layers + 1) * options.output_dim * 2
            assert run["bilm_flops"] > distinct * bilm_flops_per_position(options)   # + <S> </S>
    elmo = [r for r in result["runs"] if r["embedder"] == "glove_elmo"]
    assert len({r["bilm_flops"] for r in elmo}) == 1
    once = sum(r["gpu_hours"] for r in result["runs"]) - 2 * elmo[0]["bilm_flops"] / (10e12 * 3600)
    assert result["total_gpu_hours"] == pytest.approx(once)


def test_plan_table_by_default(capsys) -> None:
    assert main(["plan", "task=ner", "data=ner_sample", "embedder=glove", "--sample-batches", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["task", "embedder", "seed"] and "1 runs" in out


def test_bad_throughput_is_a_usage_error(capsys) -> None:
    assert main(["plan", "task=ner", "--gpu-tflops", "0"]) == 2
    assert "--gpu-tflops expected a number > 0" in capsys.readouterr().err


@needs_data
def test_unreadable_hub_data_falls_back_to_documented_sizes(capsys) -> None:
    """SNLI from the hub, offline: the documented 549,367 usable training pairs, tokens per pair from the local
    stand-in; and the paper NER head (GloVe 840B's 300 + ELMo's 1024 at its input: bilm=custom without its files
    plans the public biLM's architecture) has its preset's hand count."""
    assert main(["plan", "task=snli", "data=snli", "embedder=glove", "--format", "json",
                 "--sample-batches", "1"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["sizes"] == "documented" and run["train_examples"] == declaration("snli").dataset_sizes["snli"]["train"] == 549_367
    assert run["splits"]["test"]["examples"] == 9_824 and run["tokens"] > 549_367 * 10
    assert main(["plan", "task=ner", "head=paper", "embedder.glove_source=file", "bilm=custom", "--format", "json",
                 "--sample-batches", "1"]) == 0
    ner = json.loads(capsys.readouterr().out)["runs"][0]
    assert ner["head_params"] == 3_060_372 and ner["sizes"] == "measured"        # conf/head_preset/paper_ner.yaml
    assert ner["bilm_flops_per_token"] == 204_263_424 and ner["bilm"].startswith("public ELMo")


@needs_data
def test_coref_memory_counts_its_sparse_saved_tensors(capsys) -> None:
    """The coref head saves a sparse attention matrix for backward (no storage of its own): counted by its indices
    and values, and the plan of a LitBank run (fold 0: 80 training documents) goes through."""
    assert main(["plan", "task=coref", "embedder=glove", "--format", "json", "--sample-batches", "1"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert (run["sizes"], run["train_examples"]) == ("measured", 80)
    assert run["peak_memory_bytes"] > run["head_params"] * 4 * 4            # params + grads + Adam's two + activations


def test_python_m_elmo_bench_keeps_the_exit_code() -> None:
    """scripts/gpu_check.sh runs ``python -m elmo_bench plan``: a bad override must fail its step (exit 2)."""
    done = subprocess.run([sys.executable, "-m", "elmo_bench", "plan", "task=nope"], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "error: In 'config': Could not find 'task/nope' (available: coref, edge_chunk, edge_coref, edge_dep, "
        "edge_ner, edge_pos, edge_srl, ner, pos, snli, squad, srl, sst)"]


def test_plan_reads_the_hub_offline_even_when_datasets_was_imported_first(monkeypatch) -> None:
    """``datasets`` and ``huggingface_hub`` keep the offline switch they read at import: a plan called in a session
    that imported them before (a notebook, this test run) must set their constants too (it waited 25 s on the
    network per dataset before), and put everything back after; a user's own HF_HUB_OFFLINE=0 is left alone."""
    import datasets.config
    import huggingface_hub.constants

    from elmo_bench.base.hub_offline import local_hub_only

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    with local_hub_only():
        assert datasets.config.HF_HUB_OFFLINE is datasets.config.HF_DATASETS_OFFLINE is True
        assert huggingface_hub.constants.is_offline_mode() is True
        assert os.environ["HF_HUB_OFFLINE"] == os.environ["HF_DATASETS_OFFLINE"] == "1"
    assert datasets.config.HF_HUB_OFFLINE is huggingface_hub.constants.HF_HUB_OFFLINE is False
    assert "HF_HUB_OFFLINE" not in os.environ and "HF_DATASETS_OFFLINE" not in os.environ
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")                   # the user's choice wins
    with local_hub_only():
        assert huggingface_hub.constants.HF_HUB_OFFLINE is False and os.environ["HF_HUB_OFFLINE"] == "0"
    seen = {}

    def load(data_cfg, split):                                  # what the plan's hub read sees
        seen["offline"] = datasets.config.HF_HUB_OFFLINE
        raise DataError("offline")

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr("elmo_bench.data.hub.load_hub_split", load)
    assert main(["plan", "task=snli", "data=snli", "embedder=glove", "--format", "json", "--sample-batches", "1"]) == 0
    assert seen == {"offline": True} and datasets.config.HF_HUB_OFFLINE is False
