"""A pretraining run with ``series_dir`` exports a usable biLM at every checkpoint it writes (issue 57 item 3): named by
step and tokens seen, loadable, each equal to the checkpoint's weights, kept as they are on resume."""
from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from elmo_bench.bilm.weights import load_bilm
from elmo_bench.pretrain.series import POINT_FILE, read_point, series_points
from elmo_bench.pretrain.train import train
from tests.pretrain_helpers import tiny_config


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "train.txt"
    words = "the cat sat on the mat while a dog ran in the park and the bird sang".split()
    rng = np.random.default_rng(0)
    path.write_text("\n".join(" ".join(rng.choice(words, 9)) for _ in range(200)) + "\n")
    return path


def test_every_checkpoint_is_a_loadable_series_point(text, tmp_path):
    series = tmp_path / "series"
    summary = train(tiny_config(text, tmp_path / "run", series_dir=str(series), checkpoint_every_steps=10,
                                max_tokens=8 * 6 * 30), progress=False)
    points = series_points(series)
    assert [p.name for p in points] == [f"step-{s:08d}_tokens-{s * 48}" for s in (10, 20, 30)]
    assert json.loads((points[-1] / POINT_FILE).read_text())["tokens_seen"] == summary["tokens_seen"]
    assert read_point(points[0] / "weights.hdf5")["step"] == 10 and read_point(tmp_path) is None
    firsts = []
    for point in points:
        bilm = load_bilm(point / "options.json", point / "weights.hdf5")
        assert bilm is not None and (point / "vocab.txt").exists()
        with h5py.File(point / "weights.hdf5", "r") as handle:
            assert "softmax/W" in handle
            firsts.append(np.asarray(handle["softmax/W"]))
    assert not np.array_equal(firsts[0], firsts[-1])  # the model trained between points


def test_a_resumed_run_keeps_its_finished_points(text, tmp_path):
    series = tmp_path / "series"
    cfg = dict(series_dir=str(series), checkpoint_every_steps=10)
    train(tiny_config(text, tmp_path / "run", max_tokens=8 * 6 * 20, **cfg), progress=False)
    first = (series_points(series)[0] / "weights.hdf5").stat().st_mtime_ns
    (series_points(series)[1] / POINT_FILE).unlink()  # an export interrupted before its record: redone
    train(tiny_config(text, tmp_path / "run", max_tokens=8 * 6 * 30, **cfg), progress=False)
    points = series_points(series)
    assert len(points) == 3 and (points[0] / "weights.hdf5").stat().st_mtime_ns == first
