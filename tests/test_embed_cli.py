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


def _run_in(directory, monkeypatch, *args):
    monkeypatch.chdir(directory)
    return main(["embed", *MODEL, *args])


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "parent"])
def test_the_output_may_not_be_the_input_by_any_spelling(tmp_path, capsys, monkeypatch, spelling):
    """Issue 27 item 2: `embed --input s.txt --output s.txt` turned the text into hdf5."""
    text = b"The cat sat .\n"
    (tmp_path / "sub").mkdir()
    source = tmp_path / "s.txt"
    source.write_bytes(text)
    if spelling == "symlink":
        (tmp_path / "link.hdf5").symlink_to(source)
    output = {"same": "s.txt", "dot": "./s.txt", "symlink": "link.hdf5", "parent": "sub/../s.txt"}[spelling]
    for extra in ([], ["--overwrite"]):  # --overwrite never allows writing over the input
        assert _run_in(tmp_path, monkeypatch, "--input", "s.txt", "--output", output, *extra) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: --output") and "is the input file" in err[0]
        assert source.read_bytes() == text


def test_a_file_embed_did_not_write_is_replaced_only_with_overwrite(tmp_path, capsys, monkeypatch):
    (tmp_path / "in.txt").write_text("The cat sat .\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    assert _run_in(tmp_path, monkeypatch, "--input", "in.txt", "--output", "notes.txt") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exists and is not an hdf5 file written by elmo-bench embed" in err[0]
    assert "--overwrite" in err[0] and notes.read_text() == "my notes\n"
    # another program's hdf5 file is not embed's either
    with h5py.File(tmp_path / "other.hdf5", "w") as handle:
        handle.create_dataset("x", data=np.arange(3))
    assert _run_in(tmp_path, monkeypatch, "--input", "in.txt", "--output", "other.hdf5") == 2
    capsys.readouterr()
    with h5py.File(tmp_path / "other.hdf5", "r") as handle:
        assert list(handle) == ["x"]
    # with --overwrite it is replaced; embed's own output is then replaced without it
    assert _run_in(tmp_path, monkeypatch, "--input", "in.txt", "--output", "notes.txt", "--overwrite") == 0
    assert _run_in(tmp_path, monkeypatch, "--input", "in.txt", "--output", "notes.txt") == 0
    with h5py.File(notes, "r") as handle:
        assert handle["0"].shape == (3, 4, 32) and "elmo_bench_embed" in handle.attrs


def test_an_output_that_is_a_directory_is_one_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "in.txt").write_text("The cat sat .\n")
    (tmp_path / "out").mkdir()
    assert _run_in(tmp_path, monkeypatch, "--input", "in.txt", "--output", "out") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --output out: is a directory, expected the path of an hdf5 file to write"]
    assert list((tmp_path / "out").iterdir()) == []
