"""Issue 27 part B: what a hostile new user's inputs get now: one ``error:`` line and exit 2 (or a loud warning),
never silently wrong numbers. Each test below failed before its fix; real tiny files written in tmp_path."""
from __future__ import annotations

import gzip
import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.commands.main import COMMANDS, main
from elmo_bench.data.textio import open_text
from tests.config_snapshot import composed
from tests.conftest import REPO
from tests.warm_python import run_python

SAMPLES = REPO / "tasks" / "ner" / "samples"


def _run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return run_python(list(args), cwd=REPO, timeout=timeout)


def _ner(tmp_path: Path, run_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    """The issue's reproduce command, on copies of the NER sample in ``tmp_path/data``."""
    data = tmp_path / "data"
    if not data.exists():
        shutil.copytree(SAMPLES, data)
    return _run("run.py", "task=ner", "embedder=glove", "data=ner_sample", "trainer.max_epochs=1", "logger=disabled",
                "progress=false", f"paths.results_dir={tmp_path / 'results'}", f"paths.cache_dir={tmp_path / 'cache'}",
                f"hydra.run.dir={run_dir}", f"data.train={data / 'sample.train'}", f"data.dev={data / 'sample.dev'}",
                f"data.test={data / 'sample.test'}", *extra)


def _one_error(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert "Traceback" not in done.stderr + done.stdout
    return lines[0]


# 4. one data-identity check: evaluate, resume and skip refuse a run whose data file changed
def test_a_changed_data_file_is_refused_by_evaluate_and_by_skip(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert _ner(tmp_path, run_dir).returncode == 0 and (run_dir / "best.pt").exists()
    assert main(["evaluate", str(run_dir)]) == 0
    capsys.readouterr()
    dev = tmp_path / "data" / "sample.dev"
    dev.write_text("".join(dev.read_text().splitlines(keepends=True)[:40]))  # fewer sentences: other numbers
    assert main(["evaluate", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {dev}: the data.dev data changed since {run_dir}"), err
    again = _one_error(_ner(tmp_path, run_dir))  # the finished run is not returned as if for this data
    assert again == err[0]


# 5. an empty split: `FILE: no sentences`, for every task's reader (the check is in the engine, read_data)
EMPTY = {
    "ner": ("e.txt", "", {}),
    "pos": ("e.txt", "\n\n", {"format": "conll2000"}),
    "sst": ("e.txt", "\n", {}),
    "snli": ("e.jsonl", "\n", {}),
    "squad": ("e.json", '{"version": "1.1", "data": []}', {}),
    "srl": ("e.gold_conll", "", {"format": "conll2012"}),
    "coref": ("e.gold_conll", "", {}),
}


@pytest.mark.parametrize("task_name", sorted(EMPTY))
def test_an_empty_train_file_is_no_sentences_for_every_task(tmp_path, task_name):
    from elmo_bench.engine.experiment import load_task
    from elmo_bench.engine.prepare import read_data
    from elmo_bench.engine.run_config import DataPart

    name, text, extra = EMPTY[task_name]
    path = tmp_path / name
    path.write_text(text)
    data = DataPart.of({"source": "local", "train": str(path), "dev": str(path), "fraction": 1.0, **extra})
    with pytest.raises(DataError, match=rf"^{path}: no sentences"):
        read_data(data, load_task(task_name), 1)


@pytest.mark.parametrize("content", ["", "\n \n\n", "-DOCSTART- -X- O O\n\n-DOCSTART- -X- O O\n",
                                     "\ufeff-DOCSTART- -X- O O\n\n"])
def test_run_py_refuses_an_empty_blank_or_docstart_only_dev_file(tmp_path, content):
    (tmp_path / "data").mkdir()
    for f in SAMPLES.iterdir():
        shutil.copy(f, tmp_path / "data")
    (tmp_path / "data" / "sample.dev").write_text(content, encoding="utf-8")
    line = _one_error(_ner(tmp_path, tmp_path / "run"))
    assert line.startswith(f"error: {tmp_path / 'data' / 'sample.dev'}: no sentences")
    assert not (tmp_path / "run" / "results.json").exists()


# 6. splits of identical content: refused, naming both files; data.allow_identical_splits=true allows it
def test_test_file_as_training_data_is_refused_unless_allowed(tmp_path):
    test = tmp_path / "data" / "sample.test"
    line = _one_error(_ner(tmp_path, tmp_path / "run", f"data.train={test}"))
    assert f"the train split ({test})" in line and f"the test split ({test})" in line
    assert "data.allow_identical_splits=true" in line
    copy = tmp_path / "copy_of_dev.txt"
    shutil.copy(tmp_path / "data" / "sample.dev", copy)
    line = _one_error(_ner(tmp_path, tmp_path / "run2", f"data.test={copy}"))
    assert str(tmp_path / "data" / "sample.dev") in line and str(copy) in line
    done = _ner(tmp_path, tmp_path / "run3", f"data.test={copy}", "data.allow_identical_splits=true")
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((tmp_path / "run3" / "results.json").read_text())
    assert results["metrics"]["dev"] == results["metrics"]["test"]  # the same data, the same scores
    assert results["data"]["split_overlap"]["test_in_dev"] == 1.0      # recorded: identical is the 100% case


# 7. an unknown key added with + is an error naming the closest known key; +group=option still works
def test_an_unknown_plus_key_is_an_error_with_a_suggestion(tmp_path):
    line = _one_error(_ner(tmp_path, tmp_path / "run", "+trainer.max_epoch=3"))
    assert line.startswith("error: config: unknown key trainer.max_epoch") and "did you mean trainer.max_epochs?" in line
    assert not (tmp_path / "run" / "results.json").exists()


def test_check_added_keys_allows_config_groups_and_names_the_first_new_part():
    from elmo_bench.engine.config_check import check_added_keys

    config = {"trainer": {"max_epochs": 3, "lr": 0.1}, "pretrain": {"lr": 0.2}, "seed": 1}
    check_added_keys(["+pretrain=tiny", "trainer.lr=0.5", "++trainer.lr=1"], config, REPO / "conf")
    with pytest.raises(ConfigError, match=r"unknown key pretrain\.lrr .*did you mean pretrain\.lr\?"):
        check_added_keys(["+pretrain.lrr=1"], {**config, "pretrain": {"lr": 0.2, "lrr": 1}}, REPO / "conf")
    with pytest.raises(ConfigError, match=r"unknown key trainer\.x \(from \+trainer\.x\.y\)"):
        check_added_keys(["+trainer.x.y=1"], {**config, "trainer": {"max_epochs": 3, "x": {"y": 1}}}, REPO / "conf")


def test_a_key_added_under_a_target_node_is_a_constructor_argument():
    """encoder=python: hydra.utils.instantiate passes every key beside _target_ to the class, so +encoder.dim is read."""
    from elmo_bench.engine.config_check import check_added_keys

    config = {"encoder": {"kind": "python", "_target_": "pkg.Enc", "dim": 8}, "trainer": {"max_epochs": 3}}
    check_added_keys(["+encoder.dim=8"], config, REPO / "conf")
    with pytest.raises(ConfigError, match=r"did you mean trainer\.max_epochs\?"):
        check_added_keys(["+trainer.max_epoch=3"], {**config, "trainer": {"max_epochs": 3, "max_epoch": 3}},
                         REPO / "conf")


def test_pretrain_refuses_an_unknown_plus_key(capsys):
    assert main(["pretrain", "pretrain=tiny", "+pretrain.lrr=1"]) == 2
    assert "did you mean pretrain.lr?" in capsys.readouterr().err


# 8. BOM, NUL, SQuAD offsets, weights without weights.sha256
def test_a_bom_is_stripped_and_a_nul_byte_refused(tmp_path):
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbf-DOCSTART- -X- O O\n\nEU NNP B-NP B-ORG\n")
    from elmo_bench.data.conll2003 import read_conll

    assert [e["tokens"] for e in read_conll(bom)] == [["EU"]]
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"EU NNP B-NP B-ORG\nrej\x00ects VBZ B-VP O\n")
    with pytest.raises(DataError, match=rf"^{nul}:2: NUL byte at column 4"):
        read_conll(nul)


def test_a_squad_answer_that_disagrees_with_its_offsets_is_refused(tmp_path):
    from elmo_bench.tasks.squad.task import SquadTask

    context = "Zebras graze. Lions hunt at night."
    obj = {"version": "1.1", "data": [{"title": "Zoo", "paragraphs": [{"context": context, "qas": [
        {"id": "ok1", "question": "Who grazes?", "answers": [{"text": "Zebras", "answer_start": 0}]},
        {"id": "q-bad", "question": "What do lions do?", "answers": [{"text": "hunt at night", "answer_start": 19}]},
    ]}]}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(DataError, match=rf"^{path}: question id q-bad: answer 'hunt at night' disagrees with its "
                                        r"offsets \(the context at answer_start 19 reads ' hunt at nigh'\)"):
        SquadTask().read({"source": "local", "train": str(path), "answer_offsets": "refuse"})
    assert composed(["task=squad"])["data"]["answer_offsets"] == "refuse"  # what runs use (tasks/squad/config.py)


def test_weights_without_a_checksum_file_warn_that_integrity_was_not_checked(tmp_path, caplog):
    from elmo_bench.bilm import checksums

    (tmp_path / "weights.hdf5").write_bytes(b"finite garbage")
    with caplog.at_level(logging.WARNING, logger="elmo_bench.bilm.checksums"):
        checksums.verify_checksums(tmp_path, [tmp_path / "weights.hdf5"])
    assert any("integrity was NOT checked" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)


# 9. one line instead of a traceback
def test_a_truncated_gz_is_one_data_error(tmp_path):
    whole = gzip.compress(b"EU NNP B-NP B-ORG\n" * 2000)
    path = tmp_path / "train.txt.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DataError, match=rf"^{path}: truncated or corrupt gzip file"):
        with open_text(path) as handle:
            list(handle)
    path.write_bytes(b"\x1f\x8b not gzip at all")
    with pytest.raises(DataError, match=rf"^{path}: truncated or corrupt gzip file"):
        with open_text(path) as handle:
            handle.readline()


def test_a_truncated_gz_glove_file_is_one_data_error(tmp_path):
    from elmo_bench.data.glove import _load_text

    whole = gzip.compress(("the " + " ".join(["0.1"] * 50) + "\n").encode() * 500)
    path = tmp_path / "glove.txt.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DataError, match="truncated or corrupt gzip file"):
        _load_text(path, {"the"})


def test_truncated_run_json_and_results_json_are_one_line(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert _ner(tmp_path, run_dir).returncode == 0
    results = (run_dir / "results.json").read_text()
    (run_dir / "results.json").write_text(results[: len(results) // 2])
    line = _one_error(_ner(tmp_path, run_dir))
    assert line.startswith(f"error: {run_dir / 'run.json'}") or line.startswith(f"error: {run_dir / 'results.json'}")
    assert "truncated or malformed JSON" in line
    record = (run_dir / "run.json").read_text()
    (run_dir / "run.json").write_text(record[:100])
    assert main(["evaluate", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and err[0].startswith(f"error: {run_dir / 'run.json'}: truncated or malformed JSON")


@pytest.mark.parametrize("override, message", [
    ("seed=99999999999999999999", "error: config: seed expected an integer <= 4294967295"),
    ("task.head.lstm_hidden=[-5,100]", "error: config: task.head.lstm_hidden[0] expected an integer >= 1, found -5"),
])
def test_out_of_range_values_are_one_line(tmp_path, override, message):
    assert _one_error(_ner(tmp_path, tmp_path / "run", override)).startswith(message)


def test_pretrain_lr_nan_is_one_line(capsys):
    assert main(["pretrain", "pretrain=tiny", "pretrain.lr=nan"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == ["error: config: pretrain.lr expected a number > 0, found nan"]


def test_report_on_a_non_numeric_metric_warns_and_exits_2_without_a_traceback(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert _ner(tmp_path, run_dir).returncode == 0
    results = json.loads((run_dir / "results.json").read_text())
    results["metrics"]["dev"]["f1"] = "abc"
    bad = tmp_path / "bad" / "results.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(results))
    assert main(["report", str(bad.parent), "--out", str(tmp_path / "report"), "--no-bootstrap"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == f"warning: skipping {bad}: metric dev.f1 is 'abc'; expected a number"
    assert err[1].startswith(f"error: {bad.parent}: no usable results.json below (1 unusable") and len(err) == 2


def test_probe_pos_bad_l2_grid_prints_its_message_and_exits_2(capsys):
    assert main(["probe-pos", "--l2-grid", "abc"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: --l2-grid expected comma-separated float values, found 'abc'"]


def test_python_m_elmo_bench_returns_the_exit_code():
    """The interpreter's own exit code (a real process, not tests/warm_python's fork)."""
    done = subprocess.run([sys.executable, "-m", "elmo_bench", "probe-pos", "--l2-grid", "abc"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.startswith("error: ")


# 10. report on a missing or empty directory
def test_report_on_a_missing_or_empty_directory_exits_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    for target, message in ((tmp_path / "missing", "no such directory"), (tmp_path / "empty", "no usable results")):
        assert main(["report", str(target), "--out", str(tmp_path / "report")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [err[0]] and err[0].startswith(f"error: {target}") and message in err[0]
    assert not (tmp_path / "report" / "report.md").exists()


# 13. evaluate names what is missing; usage errors are one line plus a --help hint for every subcommand
def test_evaluate_without_best_pt_says_it_is_missing(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert _ner(tmp_path, run_dir).returncode == 0
    (run_dir / "best.pt").unlink()
    assert main(["evaluate", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert "no best.pt" in err and "results.json and checkpoint.pt are there" in err
    assert "has not finished an epoch" not in err


@pytest.mark.parametrize("command", [c for c in COMMANDS if c not in ("pretrain", "finetune-lm")])
def test_usage_errors_are_one_line_with_a_help_hint(capsys, command):
    assert main([command, "--no-such-option"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: elmo-bench {command}: "), err
    assert err[0].endswith(f"(see elmo-bench {command} --help)") and "usage:" not in captured.err + captured.out
