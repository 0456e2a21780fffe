"""Issue 46 item 5: probes fitted from streamed statistics. The streamed moments equal one update over the gathered
matrix; the closed-form ridge probe equals numpy's least squares on the gathered matrix, by hand; the streamed
fit never builds a layer's (tokens, dim) matrix (batches bounded, peak traced memory below one layer's matrix);
and ``probe=ridge`` / ``probe=erasure`` give the same numbers with ``probe.stream=true`` and ``false`` on a slice of
real UD English-EWT through the door."""
from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.probe_cost import SplitCount
from elmo_bench.probe.ridge import solve, standardised_weights
from elmo_bench.probe.streamed import Moments, layer_matrix, token_batches
from elmo_bench.probes.erasure.config import ErasureSettings
from elmo_bench.probes.erasure.probe import fit_eraser, streamed_erasers
from elmo_bench.probes.ridge.config import RidgeSettings
from elmo_bench.probes.ridge.cost import cost as ridge_cost
from elmo_bench.probes.ridge.probe import correct, fit
from tests.conftest import DATA, FIXTURES, needs_fixtures
from tests.ud_slice import ewt_slice

EWT = DATA / "pos" / "ud_english_ewt"
needs_ewt = pytest.mark.skipif(not EWT.exists(), reason="../shared/data/pos/ud_english_ewt not present (UD EWT)")


class Generated:
    """A layer source that draws sentence i's (layers, n_i, dim) from its own seed on every ``get`` (nothing held,
    as the activation cache's memory map holds nothing), with class-dependent means so the probe has a signal."""

    def __init__(self, lengths: list[int], layers: int, dim: int, classes: int) -> None:
        self.lengths, self.layers, self.dim, self.classes = lengths, layers, dim, classes
        self.offsets = np.concatenate([[0], np.cumsum(lengths)])

    def labels(self) -> np.ndarray:
        return np.concatenate([np.random.default_rng(10_000 + i).integers(0, self.classes, n)
                               for i, n in enumerate(self.lengths)])

    def get(self, i: int) -> np.ndarray:
        n = self.lengths[i]
        y = np.random.default_rng(10_000 + i).integers(0, self.classes, n)
        x = np.random.default_rng(i).normal(size=(self.layers, n, self.dim)).astype(np.float32)
        x[:, np.arange(n), y % self.dim] += 2.0
        x[:, :, 1] = 3.0 + 0.0 * x[:, :, 1]            # a constant feature (its std is clamped)
        return x


def _lengths(count: int, seed: int = 0) -> list[int]:
    return [int(n) for n in np.random.default_rng(seed).integers(1, 40, count)]


def test_streamed_moments_equal_the_gathered_matrix_s_centred_sums():
    source = Generated(_lengths(60), 2, 6, 4)
    y = source.labels()
    gathered = np.concatenate([source.get(i)[1] for i in range(60)]).astype(np.float64)
    one = Moments(6, 4)
    one.update(gathered, y)
    many = Moments(6, 4)
    for start, batch in token_batches(source, 60, [1], 37):
        many.update(batch[:, 0], y[start: start + len(batch)])
    onehot = np.eye(4)[y]
    by_hand = {"mean_x": gathered.mean(0), "mean_y": onehot.mean(0),
               "scatter": (gathered - gathered.mean(0)).T @ (gathered - gathered.mean(0)),
               "cross": (gathered - gathered.mean(0)).T @ (onehot - onehot.mean(0))}
    for name, expected in by_hand.items():
        np.testing.assert_allclose(getattr(one, name), expected, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(getattr(many, name), expected, rtol=1e-10, atol=1e-9)
    assert one.n == many.n == len(y) and many.largest_batch <= 39 and one.largest_batch == len(y)


def test_ridge_equals_numpy_least_squares_on_the_gathered_standardised_matrix():
    rng = np.random.default_rng(3)
    n, d, k = 500, 7, 3
    x = rng.normal(size=(n, d)) * np.array([1, 10, 0.1, 1, 1, 1, 1]) + 5.0
    x[:, 6] = x[:, 0] - x[:, 3]                   # linearly dependent: R is singular, λ > 0 still solves it
    y = rng.integers(0, k, n)
    moments = Moments(d, k)
    moments.update(x, y)
    ridges = [1e-3, 0.1, 10.0]
    solution = solve(moments, ridges)
    z = (x - x.mean(0)) / x.std(0)
    target = np.eye(k)[y] - np.eye(k)[y].mean(0)
    for g, ridge in enumerate(ridges):   # min (1/n)|Z W − Yc|² + λ|W|²  ⇔  lstsq of [Z/√n; √λ I] W = [Yc/√n; 0]
        stacked = np.vstack([z / np.sqrt(n), np.sqrt(ridge) * np.eye(d)])
        expected = np.linalg.lstsq(stacked, np.vstack([target / np.sqrt(n), np.zeros((d, k))]), rcond=None)[0]
        np.testing.assert_allclose(standardised_weights(solution, moments)[g], expected, rtol=1e-8, atol=1e-12)
        scores = z @ expected + np.eye(k)[y].mean(0)
        assert (solution.predict(x)[:, g] == scores.argmax(1)).all()


def test_the_streamed_ridge_fit_reads_bounded_batches_and_never_a_layer_s_matrix():
    """Peak memory, structurally: every update sees at most batch_tokens rows (one longer sentence alone), and the
    peak traced allocation of the streamed fit stays below one layer's (tokens, dim) float64 matrix, which the
    gathered fit exceeds."""
    lengths = [30] * 300 + [300]
    source = Generated(lengths, 2, 32, 5)
    y = source.labels()
    matrix_bytes = sum(lengths) * 32 * 8
    peaks = {}
    for stream in (True, False):
        settings = RidgeSettings(stream=stream, batch_tokens=256, ridge_grid=[0.01, 1.0])
        tracemalloc.start()
        moments = fit(source, len(lengths), y, [0, 1], 32, 5, settings)
        peaks[stream] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if stream:
            assert max(m.largest_batch for m in moments) == 300          # the long sentence, alone
            sizes = [len(b) for _, b in token_batches(source, len(lengths), [0, 1], 256)]
            assert max(sizes[:-1]) <= 256 and sizes[-1] == 300 and sum(sizes) == sum(lengths)
            streamed = moments
        else:
            for a, b in zip(streamed, moments):
                np.testing.assert_allclose(a.scatter, b.scatter, rtol=1e-10, atol=1e-8)
                np.testing.assert_allclose(a.cross, b.cross, rtol=1e-10, atol=1e-8)
    assert peaks[True] < matrix_bytes / 4 < matrix_bytes < peaks[False], (peaks, matrix_bytes)


def test_streamed_and_gathered_ridge_weights_and_hits_agree():
    source = Generated(_lengths(120, 1), 3, 10, 4)
    y = source.labels()
    out = {}
    for stream in (True, False):
        settings = RidgeSettings(stream=stream, batch_tokens=50, ridge_grid=[1e-4, 1e-2, 1.0])
        moments = fit(source, 120, y, [0, 2], 10, 4, settings)
        solutions = [solve(m, settings.ridge_grid) for m in moments]
        out[stream] = (solutions, correct(source, 120, y, [0, 2], solutions, settings))
    for a, b in zip(out[True][0], out[False][0]):
        np.testing.assert_allclose(a.weights, b.weights, rtol=1e-6, atol=1e-12)
    for a, b in zip(out[True][1], out[False][1]):
        assert (a == b).all() and 0.5 < a[:, 1].mean() < 1.0


def test_streamed_leace_updates_give_the_one_update_eraser():
    source = Generated(_lengths(80, 2), 2, 8, 4)
    y = source.labels()
    settings = ErasureSettings(stream=True, batch_tokens=64)
    streamed = streamed_erasers(source, 80, y, [0, 1], 8, 4, settings)
    for position, eraser in enumerate(streamed):
        x = torch.from_numpy(layer_matrix(source, 80, position))
        once = fit_eraser(x, torch.from_numpy(y), 4, 1e-8)
        assert _relative(_change(eraser), _change(once)) <= 1e-6 and _relative(eraser.bias, once.bias) <= 1e-6
        assert _relative(eraser(x), once(x)) <= 1e-6


def _change(eraser) -> torch.Tensor:
    """The eraser's linear change x ↦ x − P (x − bias), P = proj_left @ proj_right (the SVD's signs cancel)."""
    return eraser.proj_left @ eraser.proj_right


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max()) / float(b.abs().max())


def test_a_ridge_value_that_is_not_positive_is_refused():
    from elmo_bench.commands.plan import job_run

    for grid in ([0.0, 1.0], [-1.0], [], [1.0, 1.0], [float("inf")]):
        with pytest.raises(ConfigError, match=r"probe.ridge_grid expected distinct positive finite numbers"):
            RidgeSettings(ridge_grid=grid).check()
    with pytest.raises(ConfigError, match=r"found \[0.0, 1.0\]"):                       # the door, before any data
        job_run(["probe=ridge", "probe.ridge_grid=[0,1]", "probe.data_dir=/nonexistent/ud"])


def test_plan_prices_ridge_by_its_stated_formula(capsys):
    from elmo_bench.commands.main import main

    sizes = {"train": SplitCount(10, 200, 5000), "dev": SplitCount(5, 100, 2500), "test": SplitCount(5, 80, 2000)}
    settings = RidgeSettings(tags="upos", layers=[0, 2], ridge_grid=[0.1, 1.0])
    per_layer = 2 * 16 * (16 + 17) * 200 + 9 * 16 ** 3 + 2 * (4 * 16 * 16 * 17 + 2 * 16 * 17 * 180)
    assert ridge_cost(settings, sizes, layers=3, dim=16).train_flops == pytest.approx(2 * per_layer)
    assert main(["plan", "probe=ridge", "probe.data_dir=/nonexistent/ud", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["runs"]
    assert row["probe"] == "ridge" and row["sizes"] == "documented" and row["train_flops"] > 0


def _relative_gap(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


@needs_fixtures
@needs_ewt
def test_ridge_and_erasure_streamed_equal_gathered_on_real_ewt_through_the_door(tmp_path):
    """probe=ridge and probe=erasure with probe.stream=true (small batches) and false on 150/50/50 real EWT
    sentences and the test biLM: ridge's metrics to 1e-6 relative (in fact identical), the keys of probe=pos;
    erasure's erasers to 1e-6 relative, its ranks and accuracies equal and its bits within the scoring probe's
    own tolerance (its L-BFGS stops at probe.tol; at 1e-10 they agree to 3e-8, docs/bits-and-erasure.md)."""
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe

    data = ewt_slice(tmp_path, {"train": 150, "dev": 50, "test": 50})
    common = ["bilm=fixture", f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled", "progress=false",
              f"probe.data_dir={data}", "probe.batch_tokens=100"]
    ridge = {s: run_probe(job_run(["probe=ridge", f"probe.stream={s}", *common]), tmp_path / f"r{s}")
             for s in ("true", "false")}
    for split in ("dev", "test"):
        streamed, gathered = ridge["true"]["metrics"][split], ridge["false"]["metrics"][split]
        assert set(streamed) == {"layer_0_accuracy", "layer_1_accuracy", "layer_2_accuracy",
                                 "most_frequent_tag_accuracy"} == set(gathered)
        assert all(_relative_gap(streamed[k], gathered[k]) <= 1e-6 for k in streamed)
    printed, whole = (json.loads((tmp_path / f"r{s}" / "results.json").read_text())["printed"]
                      for s in ("true", "false"))
    assert printed["largest_batch"] <= 100 and whole["largest_batch"] == whole["train_tokens"] > 1000
    assert printed["ridge"] == whole["ridge"]
    assert printed["best_layer"]["best"] in ("layer_0", "layer_1", "layer_2") and printed["stream"] is True
    assert ridge["true"]["task"] == "ridge_probe" and ridge["true"]["metrics"]["test"]["layer_1_accuracy"] > 20
    erased = {s: run_probe(job_run(["probe=erasure", f"probe.stream={s}", "probe.layers=[2]", *common]),
                           tmp_path / f"e{s}")["metrics"]["test"] for s in ("true", "false")}
    for key, value in erased["false"].items():
        assert _relative_gap(erased["true"][key], value) <= (1e-3 if "bits_after" in key else 1e-6), key
    a, b = (torch.load(tmp_path / f"e{s}" / "erasers" / "layer_2.pt") for s in ("true", "false"))
    assert _relative(a["proj_left"] @ a["proj_right"], b["proj_left"] @ b["proj_right"]) <= 1e-6
    assert _relative(a["bias"], b["bias"]) <= 1e-6
    assert FIXTURES.exists()
