"""The batched converged probe (elmo_bench.probe.lib.batched): every problem reaches its own one-problem optimum, with its
own steps and its own stop, whatever the other problems of the batch do."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from elmo_bench.probe.lib.batched import Problems, fit_select_l2_batched, fit_softmax_batched
from elmo_bench.probe.lib.linear import Standardiser, accuracy, fit_select_l2, fit_softmax
from elmo_bench.probe.lib.ud_data import SPLITS
from elmo_bench.probe.pos.converged import probe_features, probe_rows, scaled_accuracy, standardised
from tests.conftest import needs_data
from tests.ud_slice import ewt_slice


def _layers(seed: int = 0, n: int = 400, dim: int = 6, classes: int = 3):
    """Three 'layers' of one labelling: one holds the label clearly, one faintly, one not at all (float64)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    centres = rng.normal(scale=2.0, size=(classes, dim))
    x = np.stack([centres[y] + rng.normal(size=(n, dim)), 0.3 * centres[y] + rng.normal(size=(n, dim)),
                  rng.normal(size=(n, dim)) * [1, 2, 3, 4, 5, 6]])
    return torch.tensor(x), torch.tensor(y)


def _gradient(probe, x, y):
    """The objective's gradient by hand (X^T (P - Y) / n + l2 W, mean(P - Y)), not the solver's."""
    p = torch.softmax(x @ probe.weight.T + probe.bias, -1)
    p[torch.arange(len(y)), y] -= 1.0
    return torch.cat([(p.T @ x / len(y) + probe.l2 * probe.weight).flatten(), p.mean(0)])


def test_each_problem_reaches_its_one_problem_optimum():
    """Float64, tol 1e-7: weights, losses, accuracies and iteration counts equal fit_softmax's problem by problem
    (the same L-BFGS, each problem with its own steps); the stopping test holds on the hand-written gradient."""
    x, y = _layers()
    l2 = [1e-2, 1e-3, 1e-1]
    together = fit_softmax_batched(Problems(x, y, 3), l2, tol=1e-7)
    for b, probe in enumerate(together):
        alone = fit_softmax(x[b], y, 3, l2[b], tol=1e-7)
        assert probe.converged and alone.converged
        assert float(_gradient(probe, x[b], y).abs().max()) <= 1e-7
        np.testing.assert_allclose(probe.weight.numpy(), alone.weight.numpy(), atol=1e-4)
        assert probe.loss == pytest.approx(alone.loss, abs=1e-12)
        # on a CPU the batched evaluation runs the one-problem operations, so the same bits, not only the optimum
        assert torch.equal(probe.weight, alone.weight) and torch.equal(probe.bias, alone.bias)
        assert accuracy(probe, x[b], y) == accuracy(alone, x[b], y)
        assert probe.iterations == alone.iterations


def test_iterations_and_stops_are_per_problem():
    """A problem fitted in a batch takes the iterations it takes alone (its search and history are its own), an
    already optimal problem takes none, and the counts differ between problems."""
    x, y = _layers(1)
    l2 = [1e-2, 1e-3, 1e-1]
    together = fit_softmax_batched(Problems(x, y, 3), l2, tol=1e-7)
    alone = [fit_softmax_batched(Problems(x[b:b + 1], y, 3), [l2[b]], tol=1e-7)[0] for b in range(3)]
    assert [p.iterations for p in together] == [p.iterations for p in alone]
    assert len({p.iterations for p in together}) > 1
    for a, b in zip(together, alone):
        assert a.loss == pytest.approx(b.loss, abs=1e-12)
    restarted = fit_softmax_batched(Problems(x, y, 3), l2, tol=1e-7, init=[together[0], alone[1], None])
    assert restarted[0].iterations == 0 and restarted[1].iterations == 0 and restarted[2].iterations > 0
    assert restarted[2].loss == pytest.approx(together[2].loss, abs=1e-12)


def test_a_problem_out_of_iterations_stops_alone():
    """max_iter is a per-problem budget, as fit_softmax's: with a cap between the problems' own counts, each problem
    stops where it stops alone under that cap (converged or not, the same iterations), whatever the others do."""
    x, y = _layers(2)
    full = fit_softmax_batched(Problems(x, y, 3), [1e-2] * 3, tol=1e-6)
    counts = sorted(p.iterations for p in full)
    assert all(p.converged for p in full) and counts[0] < counts[-1]
    cap = counts[0] + 1
    capped = fit_softmax_batched(Problems(x, y, 3), [1e-2] * 3, max_iter=cap, tol=1e-6)
    alone = [fit_softmax(x[b], y, 3, 1e-2, max_iter=cap, tol=1e-6) for b in range(3)]
    assert [p.iterations for p in capped] == [p.iterations for p in alone]
    assert [p.converged for p in capped] == [p.converged for p in alone]
    assert any(p.converged for p in capped) and not all(p.converged for p in capped)


def test_the_l2_grid_and_its_extension_are_chosen_per_problem():
    """fit_select_l2_batched picks each problem's L2 as fit_select_l2 does alone, extending the grid only for the
    problems whose weakest L2 won (float64, tol 1e-9: the same dev accuracies along the path)."""
    x, y = _layers(3, n=600)
    dev_x, dev_y = _layers(3, n=1200)
    dev_x, dev_y = dev_x[:, 600:], dev_y[600:]
    x_train, y_train = x, y
    grid = [10.0, 1.0]
    chosen = fit_select_l2_batched(Problems(x_train, y_train, 3), lambda b, probe: accuracy(probe, dev_x[b], dev_y),
                                   grid, tol=1e-9, extend=2)
    for b, found in enumerate(chosen):
        alone = fit_select_l2(x_train[b], y_train, dev_x[b], dev_y, 3, grid, tol=1e-9, extend=2)
        assert [p["l2"] for p in found.path] == [p["l2"] for p in alone.path]
        assert [p["dev"] for p in found.path] == [p["dev"] for p in alone.path]
        assert found.probe.l2 == alone.probe.l2 and found.dev_accuracy == alone.dev_accuracy
    lengths = [len(s.path) for s in chosen]
    assert max(lengths) > 2 and min(lengths) == 2          # one problem went on down the grid, one did not


def test_rows_from_fp16_equal_the_per_row_path():
    """probe_rows over fp16 features (the activation cache's dtype, standardised chunk by chunk) against
    probe_features over their float32 copies, one row at a time: the same L2, dev and test accuracies."""
    rng = np.random.default_rng(4)
    classes, dim = 4, 8
    rows, labels = {}, {}
    centres = rng.normal(scale=2.0, size=(classes, dim))
    for split, n in zip(SPLITS, (500, 300, 300)):
        labels[split] = torch.tensor(rng.integers(0, classes, n))
        layers = np.stack([centres[labels[split].numpy()] * s + rng.normal(size=(n, dim)) + 3.0
                           for s in (1.0, 0.4)], axis=1)
        rows[split] = layers.astype(np.float16)
    views = {f"layer_{k}": {s: rows[s][:, k] for s in SPLITS} for k in range(2)}
    batched = probe_rows(views, labels, classes, [1e-1, 1e-3], 1000, 1e-4)
    for name, row in views.items():
        alone = probe_features({s: row[s].astype(np.float32) for s in SPLITS}, labels, classes, [1e-1, 1e-3],
                               1000, 1e-4)
        assert (batched[name].l2, batched[name].dev, batched[name].test) == (alone.l2, alone.dev, alone.test)
        assert batched[name].converged and alone.converged
        assert batched[name].path == alone.path               # every fit's iterations and gradient norm too


def test_standardised_reads_chunks_and_matches_the_standardiser():
    """Chunk by chunk from fp16, the Standardiser's standardisation of the float32 training features, bit for bit;
    a split scored chunk by chunk gives linear.accuracy on the whole standardised split."""
    rng = np.random.default_rng(5)
    raw = {s: (rng.normal(size=(50, 3)) * [1, 10, 0] + 5).astype(np.float16) for s in SPLITS}
    out, scales = standardised([raw], chunk=7)
    scale = Standardiser.fit(torch.from_numpy(raw["train"].astype(np.float32)))
    assert out.dtype == torch.float32 and out.shape == (1, 50, 3)
    assert torch.equal(out[0], scale(torch.from_numpy(raw["train"].astype(np.float32))))
    assert torch.equal(scales[0].mean, scale.mean) and torch.equal(scales[0].std, scale.std)
    y = torch.tensor(rng.integers(0, 2, 50))
    probe = fit_softmax(out[0], y, 2, 1e-2)
    whole = accuracy(probe, scale(torch.from_numpy(raw["dev"].astype(np.float32))), y)
    assert scaled_accuracy(probe, raw["dev"], scales[0], y, chunk=9) == whole


@needs_data
def test_real_ewt_probe_run_equals_the_per_layer_fits(tmp_path):
    """probe=pos through the engine (the batched path) on the shipped biLM over 100/40/40 real UD EWT sentences,
    against probe_features row by row on the same cached layers read as float32 (the path before issue 58): every
    row's L2 path (dev accuracy, iterations, gradient norm), chosen L2 and test accuracy are equal."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.encoders.cache import ActivationCache
    from elmo_bench.engine.probe_run import load_probe_encoder, run_probe
    from elmo_bench.probe.lib.features import layer_features, tag_ids
    from elmo_bench.probe.lib.ud_data import read_tagged

    data = ewt_slice(tmp_path, {"train": 100, "dev": 40, "test": 40})
    run = job_run(["probe=pos", f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled", "progress=false",
                   f"probe.data_dir={data}", "probe.glove=false", "probe.max_train_sentences=100",
                   "probe.l2_grid=[0.01,0.0001]"])
    run_probe(run, tmp_path / "run")
    record = json.loads((tmp_path / "run" / "results.json").read_text())
    settings = run.probe.settings
    splits = read_tagged(data, settings.tags, settings.max_train_sentences, None).splits
    labels = sorted({t for ex in splits["train"] for t in ex["tags"]})
    cache = ActivationCache(tmp_path / "cache", load_probe_encoder(run)[0], progress=False)
    layers = {s: layer_features(cache.layers([ex["tokens"] for ex in splits[s]], name=f"pos/{s}"), len(splits[s]))
              for s in SPLITS}
    stored = layer_features(cache.layers([ex["tokens"] for ex in splits["dev"]], name="pos/dev"), len(splits["dev"]),
                            None)                     # what the probe reads now: the cache's fp16, no float32 copy
    assert stored.dtype == np.float16 and np.array_equal(stored.astype(np.float32), layers["dev"])
    y = {s: tag_ids(splits[s], labels) for s in SPLITS}
    rows = {**{f"layer_{k}": {s: layers[s][:, k] for s in SPLITS} for k in range(layers["train"].shape[1])},
            "average": {s: layers[s].mean(axis=1) for s in SPLITS}}
    assert set(record["probes"]) == set(rows)
    for name, row in rows.items():
        alone = probe_features(row, y, len(labels), settings.l2_grid, settings.max_iter, settings.tol)
        found = record["probes"][name]
        assert found["l2_path"] == alone.path and found["l2"] == alone.l2 and found["converged"] == alone.converged
        assert record["metrics"]["test"][f"{name}_accuracy"] == alone.test
        assert record["metrics"]["dev"][f"{name}_accuracy"] == alone.dev


def test_the_stacked_kernels_give_the_one_problem_objective_and_gradient():
    """Problems.stacked (the path off a CPU: one bmm each way, one cross entropy over every problem) against the
    per-problem path, on every problem and on a subset (float64: equal to rounding)."""
    x, y = _layers(6)
    problems = Problems(x, y, 3)
    theta = torch.tensor(np.random.default_rng(7).normal(scale=0.3, size=(3, 3 * 7)))
    weight, bias = problems.split(theta)
    for index in (torch.arange(3), torch.tensor([2, 0])):
        l2 = [0.1 * (1 + int(b)) for b in index]
        loss, grad = problems.stacked(weight[index], bias[index], l2, index)
        for i, b in enumerate(index.tolist()):
            want_loss, want_grad = problems.one(weight[b], bias[b], l2[i], b)
            assert float(loss[i]) == pytest.approx(float(want_loss), abs=1e-12)
            np.testing.assert_allclose(grad[i].numpy(), want_grad.numpy(), atol=1e-12)
