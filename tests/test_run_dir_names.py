"""Run-directory names (issue 45, Records; issue 46 item 9): a task run's directory names a model or a file by its
label (its name and a hash of its content), never by where it lives, so a moved model resumes its runs; a run whose
directory has the older name (the path spelled in it) resumes there while its identity matches."""
from __future__ import annotations

import json
import logging
import shutil
from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")

from elmo_bench.commands.hydra_setup import path_label, run_suffix, sweep_path  # noqa: E402
from elmo_bench.encoders.model_files import directory_hash, file_hash  # noqa: E402
from elmo_bench.engine.config_door import run_config  # noqa: E402
from elmo_bench.engine.experiment import run_experiment  # noqa: E402
from elmo_bench.engine.run_records import RUN_FILE  # noqa: E402
from elmo_bench.identity.history import older_names_by_content, older_run_dir  # noqa: E402
from elmo_bench.tasks.registry import registered  # noqa: E402
from tests.engine_helpers import TINY, compose_run  # noqa: E402
from tests.hf_tiny import tiny_models  # noqa: E402


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    """A tiny BERT saved with save_pretrained, copied where the test may move it."""
    where = tmp_path_factory.mktemp("models") / "place_one" / "tiny-bert"
    shutil.copytree(tiny_models()["bert"], where)
    return where


def _suffix(model: Path, *more: str) -> str:
    return run_suffix(",".join(sorted([f"encoder.path={model}", "encoder=transformers", *more])))


def test_a_model_is_named_by_its_name_and_content_hash_never_its_path(bert, tmp_path):
    suffix = _suffix(bert, "mix=learned")
    assert suffix == f"/encoder.path=tiny-bert~{directory_hash(bert)[:10]},encoder=transformers,mix=learned"
    assert not any(part in suffix for part in bert.parent.parts[1:])   # no component of where it lives
    elsewhere = tmp_path / "moved" / "deeper" / "tiny-bert"
    shutil.copytree(bert, elsewhere)
    assert _suffix(elsewhere, "mix=learned") == suffix                 # the same model elsewhere: the same name
    other = tmp_path / "other" / "tiny-bert"                            # the same name, other weights
    shutil.copytree(tiny_models()["roberta"], other)
    assert _suffix(other, "mix=learned") != suffix and _suffix(other).startswith("/encoder.path=tiny-bert~")
    # the older scheme spelled the path, "/" as "_" (shortened past 40 characters)
    assert _older_suffix(f"encoder.path={bert},encoder=transformers").startswith(
        "/encoder.path=" + str(bert)[:16].replace("/", "_") + "~")


def test_files_and_hub_names_and_plain_values(tmp_path):
    data = tmp_path / "somewhere" / "train.tsv"
    data.parent.mkdir()
    data.write_text("a\tB\n")
    assert path_label(str(data)) == f"train.tsv~{file_hash(data)[:10]}"
    assert run_suffix(f"data.train={data},trainer.lr=0.1") == f"/data.train=train.tsv~{file_hash(data)[:10]},trainer.lr=0.1"
    assert run_suffix("encoder.path=bert-base-cased,encoder=transformers") == \
        "/encoder.path=bert-base-cased,encoder=transformers"            # a hub name is no machine's path
    assert run_suffix("encoder.path=google/bert_uncased_L-2_H-128_A-2,encoder=transformers") == \
        "/encoder.path=google_bert_uncased_L-2_H-128_A-2,encoder=transformers"
    plain = "budget=cpu,mix.dropout=.5,mix=learned,task.head.lstm_hidden=[5,100]"
    assert run_suffix(plain) == _older_suffix(plain) == "/" + plain  # the biLM runs keep their names
    listed = run_suffix(f"+data.extra=[{data},{data.parent}]")   # each path of a list value by its label
    assert listed.startswith("/+data.extra=[train.tsv~") and ",somewhere~" in listed and "tmp" not in listed
    missing = path_label("/no/such/dir/model")
    assert missing.startswith("model~") and "no" not in missing.split("~")[0]


def _older_suffix(override_dirname: str) -> str:
    """run_suffix under the older names' rule (elmo_bench.identity.history.older_names_by_content)."""
    return run_suffix(override_dirname, by_content=older_names_by_content)


def _older_run_dir(output_dir: Path, override_dirname: str, cfg) -> Path | None:
    """history.older_run_dir as run.py asks it: with the run's name computation bound to its overrides."""
    return older_run_dir(output_dir, partial(sweep_path, override_dirname, _root_=cfg))


def test_older_run_dir_is_the_older_name_of_the_same_run(bert, tmp_path):
    cfg = compose_run(tmp_path, "task=ner", "embedder=elmo", tiny=False)
    dirname = f"encoder.path={bert},encoder=transformers,mix=learned"
    new = tmp_path / "results" / sweep_path(dirname, _root_=cfg, runs="runs/")
    assert new.parent.name == "elmo-seed1" and str(bert.parent) not in str(new)
    old = _older_run_dir(new, dirname, cfg)
    assert old == tmp_path / "results" / "runs" / "ner" / "elmo-seed1" / _older_suffix(dirname).lstrip("/")
    assert _older_run_dir(tmp_path / "chosen", dirname, cfg) is None           # hydra.run.dir chose it
    assert _older_run_dir(new.parent / "mix=learned", "mix=learned", cfg) is None  # no path: one name


def _run(tmp_path: Path, model: Path, run_dir: Path, older: Path | None = None):
    cfg = compose_run(tmp_path, "trainer.max_epochs=1", "embedder=elmo", "encoder=transformers",
                      f"encoder.path={model}")
    return run_experiment(run_config(cfg), run_dir, older=older)


def test_a_moved_model_resumes_into_the_same_directory(bert, tmp_path, monkeypatch, caplog):
    monkeypatch.setitem(registered(), "tiny", TINY)
    model = tmp_path / "a" / "tiny-bert"
    shutil.copytree(bert, model)
    results = tmp_path / "results"
    first_dir = results / _suffix(model).lstrip("/")
    first = _run(tmp_path, model, first_dir)
    stamp = (first_dir / "results.json").stat().st_mtime_ns
    moved = tmp_path / "b" / "c" / "tiny-bert"
    shutil.move(str(model), moved)
    assert results / _suffix(moved).lstrip("/") == first_dir
    caplog.set_level(logging.INFO)
    again = _run(tmp_path, moved, first_dir)
    assert "made by this configuration: nothing to do" in caplog.text
    assert again["metrics"] == first["metrics"] and (first_dir / "results.json").stat().st_mtime_ns == stamp
    identity = json.loads((first_dir / RUN_FILE).read_text())["identity"]
    assert "encoder.path" not in identity and identity["encoder.hash"].startswith("transformers-")


def test_an_older_scheme_directory_resumes_and_another_model_gets_its_own(bert, tmp_path, monkeypatch, caplog):
    monkeypatch.setitem(registered(), "tiny", TINY)
    dirname = f"encoder.path={bert},encoder=transformers"
    old, new = tmp_path / _older_suffix(dirname).lstrip("/"), tmp_path / run_suffix(dirname).lstrip("/")
    first = _run(tmp_path, bert, old)
    record = json.loads((old / RUN_FILE).read_text())
    record["identity"]["encoder.path"] = str(bert)            # as runs before issue 45 recorded it
    (old / RUN_FILE).write_text(json.dumps(record))
    stamp = (old / "results.json").stat().st_mtime_ns
    caplog.set_level(logging.INFO)
    again = _run(tmp_path, bert, new, older=old)
    assert f"{old}: resuming the run in its directory of the older naming scheme" in caplog.text
    assert again["metrics"] == first["metrics"] and (old / "results.json").stat().st_mtime_ns == stamp
    assert not new.exists()                                   # no duplicate started, no empty directory left
    # another model at the same path (other content): the older directory is another run's; a new one starts
    swapped = tmp_path / "swap" / bert.name
    shutil.copytree(tiny_models()["roberta"], swapped)
    older_swapped = tmp_path / _older_suffix(f"encoder.path={swapped},encoder=transformers").lstrip("/")
    shutil.copytree(old, older_swapped)                       # as if the old run had been made at this path
    fresh = tmp_path / _suffix(swapped).lstrip("/")
    assert fresh != new
    caplog.clear()
    _run(tmp_path, swapped, fresh, older=older_swapped)
    assert "is another run's" in caplog.text and (fresh / "results.json").exists()
    assert json.loads((older_swapped / RUN_FILE).read_text()) == record  # the older run left as it was


def _absolute_strings(tree, key: str = "") -> list[str]:
    if isinstance(tree, dict):
        return [hit for k, v in tree.items() for hit in _absolute_strings(v, f"{key}.{k}")]
    if isinstance(tree, list):
        return [hit for v in tree for hit in _absolute_strings(v, key)]
    return [f"{key}: {tree}"] if isinstance(tree, str) and tree.startswith("/") else []


def test_records_hold_relative_paths_only_and_evaluate_reads_them_back(bert, tmp_path, monkeypatch):
    from elmo_bench.engine.evaluate import evaluate_run_dir
    from elmo_bench.engine.run_records import read_run

    monkeypatch.setitem(registered(), "tiny", TINY)
    run_dir = tmp_path / "results" / _suffix(bert).lstrip("/")
    done = _run(tmp_path, bert, run_dir)
    results, record = (json.loads((run_dir / name).read_text()) for name in ("results.json", RUN_FILE))
    assert _absolute_strings(results) == [] and _absolute_strings(record) == []
    assert results["bilm"] is None and results["encoder"]["model"] == "tiny-bert"  # the model by its identity
    assert results["encoder"]["hash"] == directory_hash(bert)
    assert record["relative_to"]["encoder.path"] == "run" and record["relative_to"]["data.train"] == "repository"
    assert (run_dir / record["config"]["encoder"]["path"]).resolve() == bert.resolve()
    assert read_run(run_dir / RUN_FILE).config["encoder"]["path"] == str(bert)   # absolute again when read
    again = evaluate_run_dir(run_dir, device="cpu")
    assert again["metrics"]["test"] == pytest.approx(done["metrics"]["test"])


def test_the_held_log_follows_a_run_into_its_older_directory(tmp_path):
    from elmo_bench.commands.hydra_records import HeldFileHandler, release_log

    hydra_dir, older = tmp_path / "new", tmp_path / "older"
    hydra_dir.mkdir()
    older.mkdir()
    handler = HeldFileHandler(str(hydra_dir / "run.log"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        root.warning("before the run owned a directory")
        release_log(older, hydra_dir)                       # the run went on in its older directory
        root.warning("after")
    finally:
        root.removeHandler(handler)
        handler.close()
    assert (older / "run.log").read_text().splitlines() == ["before the run owned a directory", "after"]
    assert not (hydra_dir / "run.log").exists()


def test_the_committed_runs_of_the_older_scheme_are_found(tmp_path):
    """docs/results/edge_probing/minilm_l6_v2 was run with encoder.path=/tmp/i36/all-MiniLM-L6-v2: its directories
    keep their names, and a rerun of that command looks there (the identity check then decides)."""
    from tests.conftest import REPO

    dirname = "budget=cpu,encoder.path=/tmp/i36/all-MiniLM-L6-v2,encoder=transformers,mix=learned"
    cfg = compose_run(tmp_path, "task=edge_dep", "embedder=elmo", "budget=cpu", "encoder=transformers",
                      "encoder.path=/tmp/i36/all-MiniLM-L6-v2", "mix=learned", tiny=False)
    root = REPO / "docs" / "results" / "edge_probing" / "minilm_l6_v2"
    new = root / sweep_path(dirname, _root_=cfg, runs="runs/")
    assert "/tmp" not in new.relative_to(root).as_posix() and "encoder.path=all-MiniLM-L6-v2~" in new.name
    old = _older_run_dir(new, dirname, cfg)
    assert old == root / "runs" / "edge_dep" / "elmo-seed1" / (
        "budget=cpu,encoder.path=_tmp_i36_all-MiniLM-L6-v2,encoder=transformers,mix=learned")
    assert (old / "results.json").is_file()
