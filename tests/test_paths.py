"""One place knows the roots (elmo_bench/base/paths.py): the run config, the probe CLIs, pretraining and the corpus
preparation script all take their default locations from it, and pretraining paths hang from ``pretrain.work_dir``."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from hydra import compose, initialize_config_dir

from elmo_bench.base import paths
from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.commands.pretrain import compose_pretrain

REPO = Path(__file__).resolve().parents[1]


def test_roots_are_the_checkout_its_package_and_the_data_beside_it():
    assert paths.REPO == REPO and paths.PACKAGE == REPO / "elmo_bench"
    assert paths.DATA_ROOT == REPO.parent / "shared" / "data" and paths.CONF_DIR == REPO / "conf"
    assert (paths.RESOURCES / "bilm" / "options.json").is_file()


def test_run_config_data_root_and_repo_root_come_from_paths():
    register_resolvers()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config")
    assert cfg.paths.data_root == str(paths.DATA_ROOT) and cfg.paths.package_root == str(paths.REPO)
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        moved = compose("config", overrides=["paths.data_root=/elsewhere"])
    assert moved.data.train.startswith("/elsewhere/")


def test_probe_cli_defaults_live_under_the_data_and_cache_roots():
    """The probe commands' data directories are the settings' own (null: below ``paths.data_root``), their cache
    the activation cache under the cache root."""
    from elmo_bench.commands.probe_command import command_parser
    from elmo_bench.probe.registry import probe_declaration
    from elmo_bench.probe.settings import dataset_settings

    for command, probe in (("probe-pos", "pos"), ("probe-wsd", "wsd")):
        settings = probe_declaration(probe).settings
        assert dataset_settings(settings) and all(getattr(settings(), key) is None for key in dataset_settings(settings))
        args = command_parser(command).parse_args(["--out", "x"])
        assert not any(hasattr(args, key) for key in dataset_settings(settings))      # null unless given
        assert Path(args.cache_dir) == paths.CACHE_DIR / "activations"


def test_pretrain_paths_hang_from_a_configurable_work_dir():
    for preset in ("default", "shipped_v1"):
        cfg = compose_pretrain([f"pretrain={preset}"])
        work = Path(cfg.work_dir)
        assert work == REPO / "lm_work"  # relative: the checkout, never another machine's scratch path
        for key in ("train_files", "heldout_files"):
            assert getattr(cfg, key) and all(Path(p).parent == work for p in getattr(cfg, key))
        for key in ("out_dir", "export_dir", "log_file"):
            assert Path(getattr(cfg, key)).is_relative_to(work), key
    moved = compose_pretrain(["pretrain.work_dir=/scratch/lm"])
    assert moved.train_files[0] == "/scratch/lm/novels.train.txt" and moved.out_dir == "/scratch/lm/run_v2"


def test_corpus_preparation_writes_where_pretrain_reads():
    spec = importlib.util.spec_from_file_location("prepare_lm_corpus", REPO / "scripts" / "prepare_lm_corpus.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    cfg = compose_pretrain([])
    assert script.default_work_dir() == cfg.work_dir
    written = {"novels.train.txt", "novels.heldout.txt", "ptb.train.txt", "ptb.valid.txt"}
    assert {Path(p).name for p in cfg.train_files + cfg.heldout_files} <= written


def test_no_module_counts_parent_directories_of_its_own_file():
    """``Path(__file__).parents[N]`` breaks silently when a module moves; only base/paths.py may do it."""
    offenders = []
    for source in (REPO / "elmo_bench").rglob("*.py"):
        if source == REPO / "elmo_bench" / "base" / "paths.py":
            continue
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Name) and node.id == "__file__":
                offenders.append(str(source.relative_to(REPO)))
    assert not offenders, f"use elmo_bench.base.paths instead of __file__ in: {sorted(set(offenders))}"
