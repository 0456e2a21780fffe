"""`elmo-bench embed`: the AllenNLP hdf5 layout, errors with line numbers, no half-written output."""
from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
import torch

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.weights import load_bilm
from elmo_bench.commands.main import main
from tests.conftest import FIXTURES, needs_fixtures

pytestmark = needs_fixtures
MODEL = ["--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5")]


def test_embed_all_top_average(tmp_path, capsys):
    sentences = ["The cat sat .", "A much longer sentence with quite a few more words in it .", "Hi"]
    (tmp_path / "in.txt").write_text("\n".join(sentences) + "\n")
    model = load_bilm(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5")
    with torch.no_grad():
        expected = [model(batch_to_ids([s.split()])).layers[0].numpy() for s in sentences]
    for layers in ("all", "top", "average"):
        out = tmp_path / f"{layers}.hdf5"
        assert main(["embed", *MODEL, "--input", str(tmp_path / "in.txt"), "--output", str(out),
                     "--layers", layers, "--batch-size", "2"]) == 0
        with h5py.File(out, "r") as f:
            index = json.loads(f["sentence_to_index"][0])
            assert index == {s: str(i) for i, s in enumerate(sentences)}
            for i, s in enumerate(sentences):
                want = {"all": expected[i], "top": expected[i][-1], "average": expected[i].mean(0)}[layers]
                assert f[str(i)].shape == want.shape
                np.testing.assert_allclose(f[str(i)][...], want, atol=1e-5)
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["sentences"] == 3


@pytest.mark.parametrize("content, message", [
    (b"one line\n\nthird\n", "line 2: empty line"),
    (b"fine\n\xff\xfe bad\n", "line 2: byte offset 5: not valid UTF-8"),
])
def test_bad_input_names_the_line_and_leaves_no_output(tmp_path, capsys, content, message):
    (tmp_path / "in.txt").write_bytes(content)
    out = tmp_path / "out.hdf5"
    assert main(["embed", *MODEL, "--input", str(tmp_path / "in.txt"), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(tmp_path / "in.txt") in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == [tmp_path / "in.txt"]


def test_missing_input_file(tmp_path, capsys):
    assert main(["embed", *MODEL, "--input", str(tmp_path / "none.txt"), "--output", str(tmp_path / "o.hdf5")]) == 2
    assert "cannot read input" in capsys.readouterr().err
