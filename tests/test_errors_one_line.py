"""Issue 12, errors as one line: bad input reaches the user from run.py and every elmo-bench command as one line
on stderr with exit code 2 and no traceback (``--debug`` shows it); non-UTF-8 input names file, line and byte
offset; an empty gold file is an error."""
from __future__ import annotations

import subprocess

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.commands.main import main
from elmo_bench.data.textio import open_text
from tests.conftest import REPO
from tests.warm_python import run_python

LATIN1 = "-DOCSTART- -X- O O\n\nZoë NNP B-NP B-PER\n".encode("latin-1")


def _run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return run_python(list(args), cwd=REPO, timeout=timeout)


def test_run_py_reports_a_latin1_data_file_in_one_line(tmp_path):
    (tmp_path / "train.txt").write_bytes(LATIN1)
    done = _run("run.py", "task=ner", "data=ner_sample", "embedder=glove", f"data.train={tmp_path / 'train.txt'}",
                "logger=disabled", f"paths.results_dir={tmp_path / 'results'}")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'train.txt'}: line 3: byte offset 22: not valid UTF-8 (byte 0xeb); expected UTF-8 text"]
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.parametrize("override, message", [
    # typed at composition since issue 35 item 2 (runtime_schema, made from Runtime)
    ("seed=abc", "error: Error merging override seed=abc (Value 'abc' of type 'str' could not be converted to "
                 "Integer)"),
    ("seed=-1", "error: config: seed expected an integer >= 0, found -1"),
    ("task=nope", "error: In 'config': Could not find 'task/nope' (available: coref, edge_chunk, edge_coref, edge_dep, "
     "edge_ner, edge_pos, edge_srl, ner, pos, snli, squad, srl, sst)"),
])
def test_run_py_config_errors_are_one_line_and_debug_shows_the_traceback(tmp_path, override, message):
    args = ("run.py", "task=ner", "data=ner_sample", override, "logger=disabled", f"paths.results_dir={tmp_path}")
    done = _run(*args)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [message]
    debug = _run(*args, "--debug")
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_non_utf8_input_names_file_line_and_byte_offset(tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes(b"fine\nalso fine\ncaf\xe9\n")
    with pytest.raises(DataError, match=r"x.txt: line 3: byte offset 18: not valid UTF-8 \(byte 0xe9\)"):
        with open_text(path) as handle:
            list(handle)


@pytest.mark.parametrize("task, count", [("ner", 1), ("srl", 2), ("coref", 2)])
def test_score_on_missing_non_utf8_or_empty_gold_files_is_one_line(tmp_path, capsys, task, count):
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9 O O\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for files, message in (([str(tmp_path / "none.txt")] * count, "none.txt: file not found"),
                           ([str(latin)] * count, "latin.txt: line 1: byte offset 3: not valid UTF-8"),
                           ([str(empty)] * count, "empty.txt: no ")):
        assert main(["score", task, *files]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err


@pytest.mark.parametrize("size", ["-1", "0", "many"])
def test_embed_refuses_a_batch_size_below_one(tmp_path, capsys, size):
    (tmp_path / "in.txt").write_text("a b\n")
    code = main(["embed", "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o.hdf5"), "--batch-size", size])
    assert code == 2 and "expected an integer >= 1" in capsys.readouterr().err
    assert not (tmp_path / "o.hdf5").exists()


@pytest.mark.parametrize("command", ["pretrain", "finetune-lm"])
def test_pretrain_and_finetune_help(capsys, command):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: elmo-bench {command} [pretrain=PRESET]") and "pretrain:" in out


def test_a_bad_hydra_override_of_pretrain_is_one_line(capsys):
    assert main(["pretrain", "pretrain.no_such_key=3"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: Could not override 'pretrain.no_such_key'. (Key 'no_such_key' is not in struct)"]


def test_elmo_bench_debug_shows_the_exception(tmp_path):
    with pytest.raises(DataError, match="none.txt: file not found"):
        main(["score", "ner", str(tmp_path / "none.txt"), "--debug"])
