"""Issue 47: conditional probing (bits a layer adds beyond a baseline) and LEACE erasure, checked against values
computed independently and against what the definitions imply on synthetic data, then end to end on UD EWT."""
from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
import torch

from elmo_bench.probe.conditional.mlp import WordJoined, fit_mlp1
from elmo_bench.probe.erasure.probe import change_rank, fit_eraser
from elmo_bench.probe.lib import bits as cp
from elmo_bench.probe.lib.classifiers import ProbeSpec, build_probe
from elmo_bench.probe.lib.linear import Standardiser
from elmo_bench.probe.lib.regimen import Regimen
from tests.conftest import DATA, FIXTURES, needs_data, needs_fixtures
from tests.ud_slice import ewt_slice


def test_h_constant_is_the_test_labels_cross_entropy_under_the_training_prior():
    train, test = np.array([0, 0, 0, 1, 2, 2]), np.array([2, 0, 1, 1])
    freq = {label: n / len(train) for label, n in Counter(train.tolist()).items()}
    by_hand = sum(-math.log2(freq[y]) for y in test.tolist()) / len(test)
    assert cp.constant_bits(train, test, 3).mean() == pytest.approx(by_hand, abs=1e-12)


def _bits(x_train, x_test, y_train, y_test, classes, words=None):
    """Test bits per token of the converged linear probe on standardised features (and an optional lookup)."""
    scale = Standardiser.fit(torch.from_numpy(x_train))
    train, test = scale(torch.from_numpy(x_train)), scale(torch.from_numpy(x_test))
    probe = cp.fit_lookup_softmax(train, None if words is None else words[0], torch.from_numpy(y_train), classes,
                                  0 if words is None else int(words[0].max()) + 1, 1e-4, 500, 1e-6)
    return float(probe.bits(test, None if words is None else words[1], torch.from_numpy(y_test)).mean())


def _synthetic(seed: int, n: int = 3000):
    """B: 4 dims whose first one decides Y (two classes, by sign); R: 4 dims of noise independent of Y."""
    rng = np.random.default_rng(seed)
    b = rng.normal(size=(n, 4))
    r = rng.normal(size=(n, 4))
    return b, r, (b[:, 0] > 0).astype(np.int64)


def test_a_representation_independent_of_y_adds_nothing_and_one_that_decides_it_adds_h_y():
    (b, r, y), (bt, rt, yt) = _synthetic(0), _synthetic(1)
    base = _bits(b, bt, y, yt, 2)
    joint = _bits(np.hstack([b, r]), np.hstack([bt, rt]), y, yt, 2)
    assert abs(base - joint) < 0.01                       # Y is a function of B: R (independent of Y) gains ≈ 0
    h_y = cp.constant_bits(y, yt, 2).mean()
    alone = _bits(r, rt, y, yt, 2)                        # conditioned on noise, then on the deciding B
    gained = alone - _bits(np.hstack([r, b]), np.hstack([rt, bt]), y, yt, 2)
    assert h_y == pytest.approx(1.0, abs=0.01) and gained == pytest.approx(h_y, abs=0.1)


def test_a_layer_conditioned_on_itself_gains_nothing():
    (b, _, y), (bt, _, yt) = _synthetic(2), _synthetic(3)
    noisy, noisy_t = b + np.random.default_rng(4).normal(size=b.shape), bt + np.random.default_rng(5).normal(
        size=bt.shape)
    assert abs(_bits(noisy, noisy_t, y, yt, 2) - _bits(np.hstack([noisy, noisy]), np.hstack([noisy_t, noisy_t]), y,
                                                        yt, 2)) < 0.01


def test_the_word_baseline_is_a_lookup_with_one_row_for_unseen_types():
    vocabulary = cp.Vocabulary.of(["a", "b", "a", "c"])
    assert len(vocabulary) == 4 and vocabulary.ids(["c", "zzz", "a"]).tolist() == [3, 0, 1]
    words = vocabulary.ids(["a", "b", "c"] * 50)
    y = torch.tensor([0, 1, 1] * 50)
    probe = cp.fit_lookup_softmax(None, words, y, 2, len(vocabulary), 1e-4, 500, 1e-6)
    assert probe.predict(None, vocabulary.ids(["a", "b", "c"])).tolist() == [0, 1, 1]


def test_the_bootstrap_interval_holds_the_gain_and_shrinks_with_more_sentences():
    rng = np.random.default_rng(0)
    tokens = rng.integers(5, 20, size=400).astype(np.float64)
    base = tokens * 2.0 + rng.normal(size=400)
    joint = tokens * 1.5 + rng.normal(size=400)
    low, high = cp.bootstrap_gain(base, joint, tokens, 500, 0)
    gain = (base.sum() - joint.sum()) / tokens.sum()
    assert low < gain < high and high - low < 0.05
    small = cp.bootstrap_gain(base[:40], joint[:40], tokens[:40], 500, 0)
    assert small[1] - small[0] > high - low


def _mlp_bits(parts, y, lengths, seed=0, words=None, vocabulary=1):
    """Test bits per token of MLP-1 (64 units) under the regimen (lr 1e-2, 2-sentence batches, 8 epochs: converged
    on these 1,000 tokens in a few seconds) on the ``parts`` feature blocks joined."""
    dense = None if not parts else {s: np.hstack([p[s] for p in parts]) for s in y}
    regimen = Regimen(lr=1e-2, batch_sentences=2, max_epochs=8, seed=seed)
    return float(fit_mlp1(dense, words, y, lengths, 3, vocabulary, ProbeSpec("mlp1", 64), regimen).bits.mean())


def _three_classes(n: int = 1000):
    """Y uniform over 3 classes; B: 4 dims whose class means are 4 apart (Y is B's function up to ~0.02 bits);
    R: 4 dims of noise independent of Y; per split, sentences of 10 tokens."""
    sizes = {"train": n, "dev": n // 2, "test": n}
    y, b, r = {}, {}, {}
    for i, (split, size) in enumerate(sizes.items()):
        rng = np.random.default_rng(10 + i)
        y[split] = rng.integers(0, 3, size=size)
        b[split] = (rng.normal(size=(size, 4)) + 4.0 * np.eye(3, 4)[y[split]]).astype(np.float32)
        r[split] = rng.normal(size=(size, 4)).astype(np.float32)
    return b, r, y, {s: [10] * (size // 10) for s, size in sizes.items()}


def test_mlp1_an_independent_representation_adds_nothing_and_a_deciding_one_adds_h_y():
    """The MLP-1 family's two synthetic checks. Tolerances: over 4 seeds here an independent R's gain stayed within
    0.006 bits (Adam's noise between two early-stopped fits), so 0.02; the deciding gain H(Y | R) − H(Y | R, B)
    falls short of H(Y) by H(Y | B) (≈0.02 bits) and the noise-only probe's over-fit above the prior (≤0.03), so
    0.06."""
    b, r, y, lengths = _three_classes()
    assert abs(_mlp_bits([b], y, lengths) - _mlp_bits([b, r], y, lengths)) <= 0.02
    h_y = cp.constant_bits(y["train"], y["test"], 3).mean()
    gained = _mlp_bits([r], y, lengths) - _mlp_bits([r, b], y, lengths)
    assert h_y == pytest.approx(np.log2(3), abs=0.01) and gained == pytest.approx(h_y, abs=0.06)


def test_mlp1_word_lookup_is_mlp1_on_a_one_hot_word_joined_to_the_input():
    torch.manual_seed(0)
    mlp = build_probe(ProbeSpec("mlp1", 5), 3, 4)
    joined = WordJoined(mlp, 3, 6, 5)
    x, ids = torch.randn(7, 3), torch.tensor([0, 5, 2, 2, 1, 3, 4])
    plain = torch.nn.Linear(3 + 6, 5)                      # W1 over [x; one-hot(word)]: [W1 | Eᵀ]
    with torch.no_grad():
        plain.weight.copy_(torch.cat([mlp[1].weight, joined.table.weight.T], dim=1))
        plain.bias.copy_(mlp[1].bias)
        expected = mlp[3](torch.relu(plain(torch.cat([x, torch.nn.functional.one_hot(ids, 6).float()], 1))))
        assert torch.allclose(joined(torch.cat([x, ids.float()[:, None]], 1)), expected, atol=1e-6)
    b, _, y, lengths = _three_classes()                    # B = the word alone: a type per class, 0 = unseen
    words = {s: torch.from_numpy(v + 1) for s, v in y.items()}
    assert _mlp_bits([], y, lengths, words=words, vocabulary=4) < 0.05


def test_leace_leaves_a_linear_probe_the_majority_share_and_the_prior_bits_with_rank_k_minus_1():
    rng = np.random.default_rng(0)
    classes, n = 5, 4000
    y = rng.choice(classes, size=2 * n, p=[0.4, 0.25, 0.15, 0.12, 0.08])
    x = rng.normal(size=(2 * n, 12)) + np.eye(classes, 12)[y] * 3.0        # class means apart in 5 directions
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    eraser = fit_eraser(x[:n], y[:n], classes, 1e-8)
    assert change_rank(eraser) == classes - 1
    erased = eraser(x)
    scale = Standardiser.fit(erased[:n])
    probe = cp.fit_lookup_softmax(scale(erased[:n]), None, y[:n], classes, 1, 1e-4, 500, 1e-6)
    test_y = y[n:]
    accuracy = 100.0 * float((probe.predict(scale(erased[n:]), None) == test_y).double().mean())
    majority = 100.0 * float((test_y == torch.bincount(y[:n]).argmax()).double().mean())
    prior = cp.constant_bits(y[:n].numpy(), test_y.numpy(), classes).mean()
    assert abs(accuracy - majority) <= 0.5
    assert abs(float(probe.bits(scale(erased[n:]), None, test_y).mean()) - prior) <= 0.02
    before = cp.fit_lookup_softmax(Standardiser.fit(x[:n])(x[:n]), None, y[:n], classes, 1, 1e-4, 500, 1e-6)
    assert float((before.predict(Standardiser.fit(x[:n])(x[n:]), None) == test_y).double().mean()) > 0.8
    one_column = fit_eraser(x[:n], (y[:n] > 0).long(), 2, 1e-8)      # two classes: rank 1
    assert change_rank(one_column) == 1


@needs_fixtures
@needs_data
def test_conditional_and_erasure_run_through_the_door_on_ewt(tmp_path):
    """Both probes through run.py's engine on the first 200/100/400 UD EWT sentences with the test biLM: the contract's keys, h_constant
    as computed from the data, LEACE completeness and rank k − 1 on every layer; a concept with one class is one
    line."""
    from elmo_bench.base.errors import ConfigError
    from elmo_bench.commands.compose import job_run
    from elmo_bench.commands.report import build_report
    from elmo_bench.engine.probe_run import run_probe

    data = ewt_slice(tmp_path, {"train": 200, "dev": 100, "test": 400})   # not all of EWT's dev and test
    common = ["bilm=fixture", f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled", "progress=false",
              f"probe.data_dir={data}", "probe.layers=[0,2]"]
    mlp = ["probe.probe=[linear,mlp1]", "probe.hidden=32", "probe.max_epochs=8", "probe.batch_sentences=4",
           "probe.max_dev_sentences=100"]
    done = run_probe(job_run(["probe=conditional", "probe.baseline='none,layer0'", "probe.bootstrap=100", *mlp,
                              *common]), tmp_path / "c")
    test = done["metrics"]["test"]
    keys = {f"{f}{b}/layer_{k}_{m}" for f in ("", "mlp1:") for b in ("none", "layer0") for k in (0, 2)
            for m in ("h_baseline", "h_joint", "gain", "gain_lo", "gain_hi", "accuracy")}
    assert keys | {"h_constant", "test_unseen"} == set(test)
    for f in ("", "mlp1:"):
        assert test[f"{f}none/layer_0_h_baseline"] == test["h_constant"]
        for k in (0, 2):
            assert test[f"{f}layer0/layer_{k}_gain_lo"] <= test[f"{f}layer0/layer_{k}_gain"] \
                <= test[f"{f}layer0/layer_{k}_gain_hi"]
    assert test["layer0/layer_0_gain"] < 0.1 and test["mlp1:none/layer_2_gain"] > 0.5
    erased = run_probe(job_run(["probe=erasure", *common]), tmp_path / "e")["metrics"]["test"]
    classes = json.loads((tmp_path / "e" / "results.json").read_text())["data"]["num_classes"]
    for k in (0, 2):
        assert erased[f"layer_{k}_rank"] == classes - 1
        assert abs(erased[f"layer_{k}_accuracy_after"] - erased["majority"]) <= 0.5
        assert abs(erased[f"layer_{k}_bits_after"] - erased["prior_bits"]) <= 0.02
        assert erased[f"layer_{k}_accuracy_before"] > erased["majority"] + 20
    assert (tmp_path / "e" / "erasers" / "layer_2.pt").is_file()
    report = json.loads(build_report([str(tmp_path / "c"), str(tmp_path / "e")], tmp_path / "report", "json",
                                     significance=False).read_text())      # the real records in the report
    bits = report["tables"]["bits_beyond_baseline"]["rows"]
    assert {(r["probe"], r["layer"], r["relative_depth"]) for r in bits} == {
        (f, k, k / 2) for f in ("linear", "mlp1") for k in (0, 2)}
    assert [r["test"]["layer0"]["gain"]["mean"] for r in bits if r["probe"] == "mlp1"] == \
        [test[f"mlp1:layer0/layer_{k}_gain"] for k in (0, 2)]
    assert [r["holds"] for r in report["tables"]["erasure"]["rows"]] == [True, True]
    one = tmp_path / "one"
    one.mkdir()
    for split in ("train", "dev", "test"):
        lines = [f"1\tw{split}{i}\t_\tNOUN\tNN\t_\t0\troot\t_\t_\n" for i in range(3)]
        (one / f"en_ewt-ud-{split}.conllu").write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match="at least 2"):
        run_probe(job_run(["probe=erasure", f"probe.data_dir={one}", *common[:4]]), tmp_path / "one_run")
    assert not (tmp_path / "one_run").exists()
    assert DATA.exists() and FIXTURES.exists()


def test_a_family_or_baseline_outside_the_sets_is_one_line_at_the_door(tmp_path):
    from elmo_bench.base.errors import ConfigError
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import run_probe

    for override, expected in (("probe.probe=[linear,mlp2]", "probe.probe expected distinct names from linear, mlp1"),
                               ("probe.probe=[mlp1,mlp1]", "probe.probe expected distinct names"),
                               ("probe.baseline=layer1", "probe.baseline expected one or a comma list")):
        with pytest.raises(ConfigError, match=expected):
            run_probe(job_run(["probe=conditional", override, "logger=disabled"]), tmp_path / "run")
        assert not (tmp_path / "run").exists()


@needs_fixtures
@needs_data
def test_the_training_fit_script_prints_each_fit_of_the_run_and_the_run_is_unchanged(tmp_path):
    """scripts/conditional_training_fit.py (the measurement behind docs/results/bits_erasure's negative gains): one
    FIT line per linear fit of the run (B, then [B; layer] per probed layer), each with the training bits of the
    probe the run fitted; the run's own record is what it is without the script."""
    from tests.conftest import REPO
    from tests.warm_python import run_python

    data = ewt_slice(tmp_path, {"train": 60, "dev": 20, "test": 80})
    args = ["probe=conditional", "probe.baseline=layer0", "probe.layers=[0,2]", "probe.bootstrap=20", "bilm=fixture",
            f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled", "progress=false", f"probe.data_dir={data}"]
    done = run_python(["scripts/conditional_training_fit.py", *args, f"hydra.run.dir={tmp_path / 'fit'}"], cwd=REPO,
                      timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    fits = [json.loads(line[len("FIT "):]) for line in done.stderr.splitlines() if line.startswith("FIT ")]
    widths = [f["width"] for f in fits]
    assert len(fits) == 3 and widths[1] == widths[2] == 2 * widths[0]         # B, [B; layer 0], [B; layer 2]
    assert all(f["train_tokens"] > 0 and 0.0 <= f["train_bits"] < 5.0 for f in fits)
    plain = run_python(["run.py", *args, f"hydra.run.dir={tmp_path / 'plain'}"], cwd=REPO, timeout=300)
    assert plain.returncode == 0, plain.stderr[-2000:]
    record = {d: json.loads((tmp_path / d / "results.json").read_text())["metrics"] for d in ("fit", "plain")}
    assert record["fit"] == record["plain"]
