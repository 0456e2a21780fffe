"""``elmo-bench plan probe=...`` (issue 44): a probe run's row carries encoder FLOPs and cache bytes over the probe's
own sentences (checked against a count made here from the CoNLL-U files and the cache's layout), its training FLOPs
from the probe's declared formula, and CPU / GPU time; sweeps give a row per job, the suite's cpu budget cuts the
data, a bad setting is the door's one line, and data not readable here is priced from documented sizes."""
from __future__ import annotations

import gzip
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.commands.main import main
from elmo_bench.encoders.costs import bilm_flops_per_position
from elmo_bench.probe.conditional.config import ConditionalSettings
from elmo_bench.probe.conditional.cost import cost as conditional_cost
from elmo_bench.probe.mdl.config import MdlSettings
from elmo_bench.probe.mdl.cost import cost as mdl_cost
from elmo_bench.probe.pos.config import PosSettings
from elmo_bench.probe.pos.cost import cost as pos_cost
from elmo_bench.probe.probe_cost import UD_EWT_SIZES, SplitCount
from elmo_bench.probe.structural.config import StructuralSettings
from elmo_bench.probe.structural.cost import cost as structural_cost
from tests.conftest import DATA, REPO

EWT = DATA / "pos" / "ud_english_ewt"
needs_ewt = pytest.mark.skipif(not EWT.exists(), reason="../shared/data/pos/ud_english_ewt not present (UD EWT)")
SHIPPED = REPO / "elmo_bench" / "resources" / "bilm" / "options.json"
#: what every probe row of ``plan --format json`` carries
CONTRACT = {"probe", "encoder", "seed", "sentences", "tokens", "splits", "encoder_flops", "cache_bytes", "train_flops",
            "cpu_seconds", "gpu_hours", "encoder_layers", "encoder_dim", "sizes", "size_source"}
SIZES = {"train": SplitCount(10, 200, 5000), "dev": SplitCount(5, 100, 2500), "test": SplitCount(5, 80, 2000)}


def planned(capsys, *args: str) -> dict:
    assert main(["plan", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def conllu_words(path: Path) -> list[tuple[str, ...]]:
    """Each sentence's words (integer ids: no multiword ranges, no empty nodes), read here without the project."""
    opener = gzip.open if path.suffix == ".gz" else open
    sentences, words = [], []
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            cols = line.rstrip("\n").split("\t")
            if not line.strip():
                if words:
                    sentences.append(tuple(words))
                words = []
            elif not line.startswith("#") and cols[0].isdigit():
                words.append(cols[1])
    if words:
        sentences.append(tuple(words))
    return sentences


def npy_bytes(n: int) -> int:
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(n, dtype=np.int64))
    return len(buffer.getvalue())


@needs_ewt
def test_structural_row_prices_the_cache_of_its_own_sentences(capsys) -> None:
    result = planned(capsys, "probe=structural")
    (row,) = result["runs"]
    assert CONTRACT <= set(row) and row["probe"] == "structural" and row["sizes"] == "measured"
    options = BiLMOptions.load(str(SHIPPED))
    layers, dim = options.n_layers + 1, options.output_dim
    assert (row["encoder_layers"], row["encoder_dim"]) == (layers, dim) == (3, 256)
    files = {"train": EWT / "en_ewt-ud-train.conllu.gz", "dev": EWT / "en_ewt-ud-dev.conllu",
             "test": EWT / "en_ewt-ud-test.conllu"}
    cache_bytes = positions = 0
    for split, path in files.items():
        sentences = conllu_words(path)
        assert row["splits"][split] == {"sentences": len(sentences), "tokens": sum(map(len, sentences))}
        distinct = set(sentences)
        # one cache entry per split: fp16 layers of its distinct sentences, offsets.npy and rows.npy
        cache_bytes += sum(map(len, distinct)) * layers * dim * 2 + npy_bytes(len(distinct) + 1) + npy_bytes(
            len(sentences))
        positions += sum(len(s) + 2 * math.ceil(len(s) / 256) for s in distinct)
    assert row["cache_bytes"] == cache_bytes
    assert row["encoder_flops"] == positions * bilm_flops_per_position(options)
    assert row["sentences"] == 12544 and row["train_flops"] > 0
    seconds = result["cpu_rates"]["run_overhead_s"] + row["train_flops"] / (result["cpu_rates"]["head_gflops"] * 1e9) \
        + row["encoder_flops"] / (result["cpu_rates"]["encoder_gflops"] * 1e9)
    assert row["cpu_seconds"] == pytest.approx(seconds)
    assert row["gpu_hours"] == pytest.approx((row["encoder_flops"] + row["train_flops"]) / (94e12 * 3600))


@needs_ewt
def test_a_sweep_of_two_probes_gives_two_rows(capsys) -> None:
    result = planned(capsys, "-m", "probe=structural,mdl", "probe.max_train_sentences=300")
    assert [r["probe"] for r in result["runs"]] == ["structural", "mdl"]
    assert all(CONTRACT <= set(r) and r["sentences"] == 300 for r in result["runs"])
    assert main(["plan", "-m", "probe=structural,mdl", "probe.max_train_sentences=300"]) == 0
    table = capsys.readouterr().out
    assert "structural" in table and "mdl" in table and "2 runs" in table


@needs_ewt
def test_probe_suite_on_the_cpu_budget_gives_five_rows_that_follow_the_budget(capsys) -> None:
    result = planned(capsys, "-m", "experiment=probe_suite", "budget=cpu")
    rows = {r["probe"]: r for r in result["runs"]}
    assert list(rows) == ["pos", "pos_controls", "structural", "mdl", "mdl_mlp"]
    first = conllu_words(EWT / "en_ewt-ud-train.conllu.gz")[:2000]
    for row in rows.values():
        assert row["sentences"] == 2000 and row["tokens"] == sum(map(len, first)) < UD_EWT_SIZES["train"].tokens
        assert row["seed"] == 0
    assert rows["structural"]["settings"]["max_epochs"] == 10 and rows["mdl_mlp"]["settings"]["hidden"] == 256
    assert rows["mdl"]["settings"]["control"] is True and rows["pos"]["settings"]["glove"] is False
    # the five probes read the same sentences: the first fills the activation cache, the others read it
    # the L-BFGS fits (pos's converged probe) at L-BFGS's rate, the rest of the training at the head's
    rates = result["cpu_rates"]
    assert rows["pos"]["lbfgs_flops"] > 0 and rows["structural"]["lbfgs_flops"] == 0
    for name, row in rows.items():
        cold = name == "pos"
        expected = rates["run_overhead_s"] + (row["train_flops"] - row["lbfgs_flops"]) / (rates["head_gflops"] * 1e9) \
            + row["lbfgs_flops"] / (rates["lbfgs_gflops"] * 1e9) \
            + (row["encoder_flops"] / (rates["encoder_gflops"] * 1e9) if cold else 0)
        assert row["cpu_seconds"] == pytest.approx(expected), name
    assert result["total_cpu_seconds"] == pytest.approx(sum(r["cpu_seconds"] for r in rows.values()))


def test_a_bad_probe_setting_is_the_doors_one_line(capsys) -> None:
    assert main(["plan", "probe=structural", "probe.max_epochs=0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "probe.max_epochs expected an integer >= 1, found 0" in err and len(err.splitlines()) == 1
    assert main(["plan", "probe=structural", "probe.layers=[5]", "probe.data_dir=/nonexistent/ud"]) == 2
    err = capsys.readouterr().err.strip()
    assert "probe.layers expected distinct layer indices of this encoder ([0, 1, 2])" in err and len(err.splitlines()) == 1


def test_data_not_readable_here_is_priced_from_documented_sizes(capsys) -> None:
    result = planned(capsys, "probe=structural", "probe.data_dir=/nonexistent/ud", "probe.max_train_sentences=6272")
    (row,) = result["runs"]
    assert row["sizes"] == "documented" and "not readable here" in row["size_source"]
    assert row["splits"]["train"] == {"sentences": 6272, "tokens": round(UD_EWT_SIZES["train"].tokens / 2)}
    assert row["splits"]["dev"]["tokens"] == UD_EWT_SIZES["dev"].tokens
    distinct = sum(c["tokens"] for c in row["splits"].values())
    index = sum(2 * 128 + 16 * c["sentences"] + 8 for c in row["splits"].values())
    options = BiLMOptions.load(str(SHIPPED))
    assert row["cache_bytes"] == distinct * (options.n_layers + 1) * options.output_dim * 2 + index
    assert main(["plan", "probe=structural", "probe.data_dir=/nonexistent/ud"]) == 0
    assert "probe structural: ud_ewt not readable here" in capsys.readouterr().out


def test_without_the_cache_structural_computes_each_split_once_per_probed_layer(capsys) -> None:
    cached = planned(capsys, "probe=structural", "probe.data_dir=/nonexistent/ud")["runs"][0]
    live = planned(capsys, "probe=structural", "probe.data_dir=/nonexistent/ud", "cache=false",
                   "probe.layers=[0,2]")["runs"][0]
    assert live["cache_bytes"] == 0 and live["encoder_flops"] == 2 * cached["encoder_flops"]


def test_structural_training_flops_follow_the_stated_formula() -> None:
    settings = StructuralSettings(rank=8, max_epochs=3, layers=[0, 2])
    forward = 2 * (2 * 16 * 8) + 3 * (5000 / 200) * 8 + 3 * 8
    per_layer = 3 * (3 * forward * 200 + forward * 100) + forward * (100 + 80)
    assert structural_cost(settings, SIZES, layers=3, dim=16).train_flops == pytest.approx(2 * per_layer)
    assert structural_cost(settings, SIZES, 3, 16).reads == 2


def test_mdl_control_doubles_the_work_and_the_blocks_train_on_twice_the_tokens() -> None:
    plain = mdl_cost(MdlSettings(max_epochs=1), SIZES, layers=3, dim=16).train_flops
    assert mdl_cost(MdlSettings(max_epochs=1, control=True), SIZES, 3, 16).train_flops == pytest.approx(2 * plain)
    params = 16 * 49
    share = 0.001 + 0.002 + 0.004 + 0.008 + 0.016 + 0.032 + 0.0625 + 0.125 + 0.25 + 0.5 + 1.0
    one_layer = 6 * params * 200 * share + 11 * (2 * params * 100 + 2 * params * 180) + 2 * params * 200
    assert plain == pytest.approx(3 * one_layer)


def test_the_converged_pos_probe_is_bounded_by_max_iter_passes_per_l2_value() -> None:
    settings = PosSettings(glove=False, layers=[1], max_iter=10, l2_grid=[0.1, 0.01])
    rows = 2                                                        # layer_1 and the average
    bound = rows * 2 * (10 * 6 * 16 * 49 * 200 + 2 * 16 * 49 * 180)
    assert pos_cost(settings, SIZES, layers=3, dim=16).train_flops == pytest.approx(bound)
    with_control = PosSettings(glove=False, layers=[1], max_iter=10, l2_grid=[0.1, 0.01], control=True, seeds=[1, 2])
    assert pos_cost(with_control, SIZES, 3, 16).train_flops == pytest.approx(2 * bound)   # + one fit per seed


def test_run_pys_sweep_check_composes_a_key_below_the_swept_probe_group() -> None:
    from elmo_bench.commands.sweep_check import check_sweep

    # probe.max_epochs exists only once a probe is chosen: the check composes the sweep's jobs, not the fixed part
    assert check_sweep(["run.py", "-m", "probe=structural,mdl", "probe.max_epochs=2"]) == 2
    with pytest.raises(ConfigError, match="probe.max_epochs expected an integer >= 1"):
        check_sweep(["run.py", "-m", "probe=structural,mdl", "probe.max_epochs=0"])


def bilm_terms(options: BiLMOptions) -> tuple[int, int]:
    """(token layer, one LSTM layer of both directions) forward FLOPs a position, written out here from the
    architecture: char CNN Σ 2 (C − w + 1) w e n, highway 2 (2 F F) each, projection 2 F P; an LSTM direction's
    4 gates over [P; P] into H and its H → P projection."""
    c, e, f = options.max_characters_per_token, options.char_dim, options.n_filters
    p, h = options.projection_dim, options.lstm_dim
    token = sum(2 * (c - w + 1) * w * e * n for w, n in options.filters) + options.n_highway * 4 * f * f + 2 * f * p
    return token, 2 * (2 * 2 * p * 4 * h + 2 * h * p)


@needs_ewt
def test_erasure_on_the_cpu_budget_prices_its_train_and_test_sentences(capsys) -> None:
    result = planned(capsys, "probe=erasure", "budget=cpu")
    (row,) = result["runs"]
    assert CONTRACT <= set(row) and row["sizes"] == "measured" and set(row["splits"]) == {"train", "test"}
    options = BiLMOptions.load(str(SHIPPED))
    splits = {"train": conllu_words(EWT / "en_ewt-ud-train.conllu.gz")[:1000],
              "test": conllu_words(EWT / "en_ewt-ud-test.conllu")}
    cache_bytes = positions = 0
    for split, sentences in splits.items():
        assert row["splits"][split] == {"sentences": len(sentences), "tokens": sum(map(len, sentences))}
        distinct = set(sentences)
        cache_bytes += sum(map(len, distinct)) * 3 * 256 * 2 + npy_bytes(len(distinct) + 1) + npy_bytes(len(sentences))
        positions += sum(len(s) + 2 * math.ceil(len(s) / 256) for s in distinct)
    assert row["sentences"] == 1000 and row["cache_bytes"] == cache_bytes
    assert row["encoder_flops"] == positions * bilm_flops_per_position(options)
    train, test, d, k = row["splits"]["train"]["tokens"], row["splits"]["test"]["tokens"], 256, 17
    probes = 2 * (1000 * 6 * d * k * train + 2 * d * k * test)      # max_iter passes each: priced as the bound
    per_layer = (2 * train * d * d + 2 * train * d * k + 22 * d ** 3 + 6 * d * d * k + 4 * train * d * d
                 + 4 * (train + test) * d * (k - 1) + probes)
    assert row["train_flops"] == row["train_flops_bound"] == pytest.approx(3 * per_layer)
    assert row["lbfgs_flops"] == row["lbfgs_flops_bound"] == pytest.approx(3 * probes)    # at L-BFGS's CPU rate
    rates = result["cpu_rates"]
    assert row["cpu_seconds"] == pytest.approx(rates["run_overhead_s"] + 3 * (per_layer - probes) / (
        rates["head_gflops"] * 1e9) + 3 * probes / (rates["lbfgs_gflops"] * 1e9) + row["encoder_flops"] / (
        rates["encoder_gflops"] * 1e9))
    assert row["settings"]["max_train_sentences"] == 1000


def test_erasure_without_its_data_is_priced_from_ewts_train_and_test(capsys) -> None:
    row = planned(capsys, "probe=erasure", "probe.data_dir=/nonexistent/ud", "probe.max_train_sentences=6272",
                  "probe.layers=[2]", "probe.tags=deprel")["runs"][0]
    assert row["sizes"] == "documented" and set(row["splits"]) == {"train", "test"}
    assert row["splits"]["train"] == {"sentences": 6272, "tokens": round(UD_EWT_SIZES["train"].tokens / 2)}
    assert "K 36 deprel" in row["train_formula"] and row["train_formula"].startswith("1 layers")


@needs_ewt
def test_amnesic_lm_prices_the_biLM_passes_and_softmax_over_its_dev_sentences(capsys) -> None:
    result = planned(capsys, "probe=amnesic_lm", "budget=cpu", "probe.erasers=runs/erasure")
    (row,) = result["runs"]
    assert CONTRACT <= set(row) and row["cache_bytes"] == 0 and set(row["splits"]) == {"dev"}
    dev = conllu_words(EWT / "en_ewt-ud-dev.conllu")[:1000]
    tokens = sum(map(len, dev))
    assert (row["sentences"], row["tokens"]) == (1000, tokens)
    token, lstm = bilm_terms(BiLMOptions.load(str(SHIPPED)))
    positions = tokens + 2 * 1000
    # 5 variants (none, erased, 3 random seeds); erasing layer k recomputes the 2 − k LSTM layers above it
    passes = sum(2 + 4 * (2 - k) for k in range(3))
    assert row["encoder_flops"] == 3 * positions * token + passes * positions * lstm
    vocab = len((REPO / "elmo_bench" / "resources" / "bilm" / "vocab.txt").read_text().split())
    # per prediction and variant: the softmax's product 2 P V, its bias V, log-softmax 5 V, KL 4 V, argmax V
    assert row["train_flops"] == 3 * 5 * 2 * (tokens + 1000) * (2 * 128 + 11) * vocab
    rates = result["cpu_rates"]                   # no activation cache: the encoder is always run
    assert row["cpu_seconds"] == pytest.approx(rates["run_overhead_s"] + row["train_flops"] / (
        rates["head_gflops"] * 1e9) + row["encoder_flops"] / (rates["encoder_gflops"] * 1e9))
    one = planned(capsys, "probe=amnesic_lm", "probe.erasers=runs/erasure", "probe.layers=[2]", "probe.seeds=1",
                  "probe.data_dir=/nonexistent/ud")["runs"][0]
    dev_sizes = UD_EWT_SIZES["dev"]
    assert one["sizes"] == "documented" and one["splits"] == {"dev": {"sentences": 2001, "tokens": 25147}}
    assert one["encoder_flops"] == (25147 + 2 * 2001) * (token + 2 * lstm)
    assert one["train_flops"] == 3 * 2 * (dev_sizes.tokens + 2001) * (2 * 128 + 11) * vocab


def test_amnesic_lm_without_erasers_or_an_lm_head_is_one_line(capsys) -> None:
    assert main(["plan", "probe=amnesic_lm"]) == 2
    err = capsys.readouterr().err.strip()
    assert "probe=amnesic_lm needs probe.erasers" in err and len(err.splitlines()) == 1
    assert main(["plan", "probe=amnesic_lm", "probe.erasers=runs/erasure", "bilm=random",
                 "probe.data_dir=/nonexistent/ud"]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs a trained biLM with its softmax" in err and "random_init=all" in err and len(err.splitlines()) == 1


def split_cache(sentences: list[tuple[str, ...]], layers: int = 3, dim: int = 256) -> tuple[int, int]:
    """(cache bytes, biLM positions) of one split's entry, counted here: fp16 layers of its distinct sentences,
    offsets.npy and rows.npy; each distinct sentence with <S> and </S> around every 256-word segment."""
    distinct = set(sentences)
    return (sum(map(len, distinct)) * layers * dim * 2 + npy_bytes(len(distinct) + 1) + npy_bytes(len(sentences)),
            sum(len(s) + 2 * math.ceil(len(s) / 256) for s in distinct))


@needs_ewt
def test_conditional_on_the_cpu_budget_prices_every_baseline_family_and_the_random_twin(capsys) -> None:
    result = planned(capsys, "probe=conditional", "budget=cpu", "probe.baseline='none,layer0,word,random'",
                     "probe.probe=[linear,mlp1]")
    (row,) = result["runs"]
    assert CONTRACT <= set(row) and row["sizes"] == "measured" and set(row["splits"]) == {"train", "dev", "test"}
    splits = {"train": conllu_words(EWT / "en_ewt-ud-train.conllu.gz")[:1000],
              "dev": conllu_words(EWT / "en_ewt-ud-dev.conllu"), "test": conllu_words(EWT / "en_ewt-ud-test.conllu")}
    cache_bytes = positions = 0
    for split, sentences in splits.items():
        assert row["splits"][split] == {"sentences": len(sentences), "tokens": sum(map(len, sentences))}
        entry, counted_positions = split_cache(sentences)
        cache_bytes, positions = cache_bytes + entry, positions + counted_positions
    one = positions * bilm_flops_per_position(BiLMOptions.load(str(SHIPPED)))
    # the random baseline reads the random_init=all twin: the same architecture over the same sentences, again
    assert row["twin"] == {"encoder_flops": one, "cache_bytes": cache_bytes}
    assert (row["encoder_flops"], row["cache_bytes"]) == (2 * one, 2 * cache_bytes)
    t, d, s = (row["splits"][x]["tokens"] for x in ("train", "dev", "test"))
    # input widths of every fit, 3 layers of 256: none 3 x ℓ; layer0 B + 3 x [B; ℓ]; word the lookup (one column)
    # + 3 x [word; ℓ]; random 3 x (twin ℓ, [twin ℓ; ℓ])
    widths = [256] * 3 + [256] + [512] * 3 + [1] + [257] * 3 + [256, 512] * 3
    linear = sum(1000 * 6 * w * 17 * t + 2 * w * 17 * s for w in widths)
    # MLP-1 under budget=cpu: h 256, 10 epochs of training steps (6 P a token) and the dev loss (2 P), then dev and
    # test scored (2 P)
    mlp1 = sum(10 * (6 * p * t + 2 * p * d) + 2 * p * (d + s) for p in (w * 256 + 256 * 17 for w in widths))
    assert row["train_flops"] == pytest.approx(linear + mlp1)
    rates = result["cpu_rates"]
    assert row["cpu_seconds"] == pytest.approx(rates["run_overhead_s"] + row["train_flops"] / (
        rates["head_gflops"] * 1e9) + row["encoder_flops"] / (rates["encoder_gflops"] * 1e9))


def test_conditional_without_its_data_prices_the_splits_it_encodes(capsys) -> None:
    linear = planned(capsys, "probe=conditional", "probe.data_dir=/nonexistent/ud", "probe.layers=[2]",
                     "probe.tags=xpos")["runs"][0]
    assert linear["sizes"] == "documented" and set(linear["splits"]) == {"train", "test"}   # dev: MLP-1 only
    assert "twin" not in linear and linear["train_formula"].startswith("1 layers") and "K 49 xpos" in linear[
        "train_formula"]
    options = BiLMOptions.load(str(SHIPPED))
    train, test = UD_EWT_SIZES["train"], UD_EWT_SIZES["test"]
    assert linear["encoder_flops"] == (train.tokens + 2 * train.sentences + test.tokens + 2 * test.sentences) * \
        bilm_flops_per_position(options)
    # baseline layer0 on layer 2: B (256 wide) once, [B; ℓ] (512) once
    assert linear["train_flops"] == pytest.approx(sum(1000 * 6 * w * 49 * train.tokens + 2 * w * 49 * test.tokens
                                                      for w in (256, 512)))
    both = planned(capsys, "probe=conditional", "probe.data_dir=/nonexistent/ud", "probe.probe=[linear,mlp1]",
                   "probe.max_dev_sentences=500", "probe.max_train_sentences=6272")["runs"][0]
    assert both["splits"]["dev"] == {"sentences": 500, "tokens": round(UD_EWT_SIZES["dev"].tokens * 500 / 2001)}
    assert both["splits"]["train"] == {"sentences": 6272, "tokens": round(train.tokens / 2)}


def test_conditional_counts_one_fit_per_input_and_flags_the_twin() -> None:
    settings = ConditionalSettings(baseline="word", layers=[1], max_iter=10)
    # the word lookup alone (one column), then [word; ℓ] (16 + 1)
    expected = sum(10 * 6 * w * 17 * 200 + 2 * w * 17 * 80 for w in (1, 17))
    found = conditional_cost(settings, SIZES, layers=3, dim=16)
    assert found.train_flops == pytest.approx(expected) and not found.twin
    twin = conditional_cost(ConditionalSettings(baseline="none,random", layers=[1], max_iter=10), SIZES, 3, 16)
    assert twin.twin and twin.train_flops == pytest.approx(sum(10 * 6 * w * 17 * 200 + 2 * w * 17 * 80
                                                               for w in (16, 16, 32)))


def test_conditional_random_baseline_on_an_encoder_without_a_twin_is_the_runs_line(capsys) -> None:
    assert main(["plan", "probe=conditional", "probe.baseline=random", "encoder=python",
                 "encoder._target_=tests.user_encoder.hashing.HashingEncoder", "+encoder.dim=64",
                 "probe.data_dir=/nonexistent/ud"]) == 2
    err = capsys.readouterr().err.strip()
    assert "probe.baseline=random all: encoder python cannot be randomised" in err and len(err.splitlines()) == 1
