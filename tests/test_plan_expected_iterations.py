"""Issue 56 item 4: ``plan`` prices a probe's full-batch L-BFGS fits at their expected iterations (the mean over the
committed records' fits, recounted here from docs/results), at L-BFGS's own CPU rate (recomputed here from the record
it comes from), with ``max_iter`` iterations a fit kept beside it as the bound; the ``plan probe=...`` table shows
both, the encoder's weights and the estimated-subwords note."""
from __future__ import annotations

import json

import pytest

from elmo_bench.commands.main import main
from elmo_bench.commands.plan_cpu import MEASURED
from elmo_bench.probe.pos.config import PosSettings
from elmo_bench.probe.pos.cost import cost as pos_cost
from elmo_bench.probe.probe_cost import EXPECTED_ITERATIONS, EXTRA_FITS, SplitCount
from tests.conftest import DATA, REPO

EWT = DATA / "pos" / "ud_english_ewt"
#: the committed records that list every fit's iterations (each row's l2_path), and whether they have a GloVe row
RECORDS = {"docs/results/probes/pos_v2_final_4000": True, "docs/results/probe_suite/bilm_v2/pos": False}
SIZES = {"train": SplitCount(10, 200, 5000), "dev": SplitCount(5, 100, 2500), "test": SplitCount(5, 80, 2000)}


def _record(folder: str) -> dict:
    return json.loads((REPO / folder / "results.json").read_text(encoding="utf-8"))


def test_the_expected_iterations_are_the_mean_of_the_committed_records_fits() -> None:
    fits, rows = [], 0
    for folder in RECORDS:
        for row in _record(folder)["probes"].values():
            fits += [fit["iterations"] for fit in row["l2_path"]]
            rows += 1
    assert (len(fits), sum(fits), rows) == (41, 7484, 9)
    assert EXPECTED_ITERATIONS == round(sum(fits) / len(fits)) == 183
    assert EXTRA_FITS == pytest.approx((len(fits) - 4 * rows) / rows)     # past the 4-value L2 grid


def test_the_converged_pos_probe_is_priced_at_the_expected_iterations_with_the_bound_beside_it() -> None:
    settings = PosSettings(glove=False, layers=[1], max_iter=1000, l2_grid=[0.1, 0.01])
    found = pos_cost(settings, SIZES, layers=3, dim=16)
    rows, fit = 2, 6 * 16 * 49 * 200                               # layer_1 and the average; one pass 6 w K T
    scored = 2 * 16 * 49 * 180
    assert found.lbfgs_bound == pytest.approx(rows * 2 * (1000 * fit + scored)) == found.train_flops
    assert found.lbfgs_expected == pytest.approx(rows * (2 + EXTRA_FITS) * (183 * fit + scored))
    assert found.expected_flops == pytest.approx(found.lbfgs_expected)
    few = pos_cost(PosSettings(glove=False, layers=[1], max_iter=10, l2_grid=[0.1, 0.01]), SIZES, 3, 16)
    assert few.lbfgs_expected == pytest.approx(rows * (2 + EXTRA_FITS) * (10 * fit + scored))   # never past max_iter


@pytest.mark.skipif(not EWT.exists(), reason="../shared/data/pos/ud_english_ewt not present (UD EWT)")
def test_the_lbfgs_rate_is_the_4000_sentence_records_fits_over_its_seconds() -> None:
    from elmo_bench.probe.lib.ud_data import tagged_sentences

    record = _record("docs/results/probes/pos_v2_final_4000")
    read = tagged_sentences(EWT, "xpos", 4000, None)
    train = sum(map(len, read["train"]))
    scored = sum(map(len, read["dev"])) + sum(map(len, read["test"]))
    flops = sum(fit["iterations"] * 6 * w * 49 * train + 2 * w * 49 * scored
                for name, row in record["probes"].items() for w in [300 if name == "glove" else 256]
                for fit in row["l2_path"])
    seconds = record["timings"]["total_seconds"] - record["timings"]["bilm_seconds"] - MEASURED.run_overhead_s
    assert MEASURED.lbfgs_gflops == pytest.approx(flops / seconds / 1e9, rel=0.01)


def test_the_probe_table_shows_the_bound_the_weights_and_the_estimated_subwords(capsys, tmp_path) -> None:
    model = tmp_path / "llama8b"                          # Llama-3-8B's sizes, config.json only: no weights read
    model.mkdir()
    (model / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192}))
    args = ["plan", "probe=pos", "probe.data_dir=/nonexistent/ud", "encoder=transformers", f"encoder.path={model}",
            "encoder.dtype=bfloat16", "encoder.layers=[16]"]
    assert main([*args, "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)["runs"][0]
    assert row["weight_bytes"] == 2 * row["encoder_params"] and 14.9e9 < row["weight_bytes"] < 15.1e9
    assert row["lbfgs_flops"] < row["lbfgs_flops_bound"] and row["cpu_seconds"] < row["cpu_seconds_bound"]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "train bound" in table and "CPU bound" in table
    line = next(x for x in table.splitlines() if x.startswith("encoder transformers"))
    assert f"weights {row['weight_bytes'] / 1e9:.2f} GB" in line and "subword counts estimated" in line
    assert f"{row['cpu_seconds_bound'] / 60:.1f}" in next(x for x in table.splitlines() if x.startswith("pos "))
