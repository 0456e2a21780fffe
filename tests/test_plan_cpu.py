"""``plan``'s predicted CPU wall time (issue 38 item 3; elmo_bench.commands.plan_cpu): the arithmetic on a
hand-computed sweep, the shared activation cache filled once, and the edge sweep at ``budget=cpu`` printing it."""
from __future__ import annotations

import json

import pytest

from elmo_bench.commands.main import main
from elmo_bench.commands.plan_cpu import MEASURED, CpuRates, run_cpu_seconds, sweep_cpu_seconds
from tests.conftest import needs_fixtures

RATES = CpuRates(head_gflops=10.0, encoder_gflops=20.0, run_overhead_s=5.0, source="hand-made")


def test_a_hand_computed_sweep():
    # two runs over one cache entry "a", a run over another entry "b", a run without a cache (computes its own)
    runs = [{"head_flops_total": 1e11, "encoder_flops": 4e11}, {"head_flops_total": 3e11, "encoder_flops": 4e11},
            {"head_flops_total": 2e11, "encoder_flops": 6e10}, {"head_flops_total": 5e10, "encoder_flops": 0}]
    seconds = sweep_cpu_seconds(runs, ["a", "a", "b", None], RATES)
    # 5 s overhead + head FLOPs / 10 GFLOP/s + (a cold cache only) encoder FLOPs / 20 GFLOP/s
    assert seconds == pytest.approx([5 + 10 + 20, 5 + 30, 5 + 20 + 3, 5 + 5])
    assert sum(seconds) == pytest.approx(108.0)


def test_an_encoder_plan_cannot_count_adds_nothing_and_a_warm_cache_reads_only():
    run = {"head_flops_total": 1e10, "encoder_flops": None}
    assert run_cpu_seconds(run, RATES, cold_cache=True) == pytest.approx(6.0)
    assert run_cpu_seconds({"head_flops_total": 1e10, "encoder_flops": 1e12}, RATES, cold_cache=False) == \
        pytest.approx(6.0)


def test_the_head_rate_can_be_set_by_hand_and_a_bad_one_is_a_usage_error(capsys):
    assert MEASURED.with_head(3.0, "x") == CpuRates(3.0, MEASURED.encoder_gflops, MEASURED.run_overhead_s, "x")
    assert main(["plan", "task=ner", "--cpu-gflops", "0"]) == 2
    assert "--cpu-gflops expected a number > 0" in capsys.readouterr().err


@needs_fixtures
def test_the_edge_sweep_at_budget_cpu_prints_its_cpu_time(capsys):
    args = ["plan", "task=edge_pos", "data=edge_pos_sample", "embedder=elmo", "bilm=fixture", "budget=cpu",
            "mix=all_modes", "--device", "cpu", "--sample-batches", "1", "--cpu-gflops", "5"]
    assert main([*args, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    runs = result["runs"]
    assert len(runs) == 5 and result["cpu_rates"]["head_gflops"] == 5.0
    overhead, encoder = result["cpu_rates"]["run_overhead_s"], result["cpu_rates"]["encoder_gflops"] * 1e9
    expected = [overhead + r["head_flops_total"] / 5e9 for r in runs]
    expected[0] += runs[0]["encoder_flops"] / encoder                 # one cache, filled by the first mode
    assert [r["cpu_seconds"] for r in runs] == pytest.approx(expected)
    assert result["total_cpu_seconds"] == pytest.approx(sum(expected))
    assert main(args) == 0
    assert "predicted CPU wall time, run after run, one thread: " in capsys.readouterr().out


@needs_fixtures
def test_measure_cpu_times_the_head_and_the_bilm_here(capsys):
    assert main(["plan", "task=edge_ner", "data=edge_ner_sample", "embedder=elmo", "bilm=fixture", "budget=cpu",
                 "--device", "cpu", "--sample-batches", "1", "--measure-cpu", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rates, run = result["cpu_rates"], result["runs"][0]
    assert rates["head_gflops"] > 0 and rates["encoder_gflops"] > 0 and run["cpu_head_gflops"] == rates["head_gflops"]
    assert "timed here over" in rates["source"] and "on 200 of its training sentences" in rates["source"]
    expected = rates["run_overhead_s"] + run["head_flops_total"] / (rates["head_gflops"] * 1e9) \
        + run["encoder_flops"] / (rates["encoder_gflops"] * 1e9)
    assert result["total_cpu_seconds"] == pytest.approx(expected)
