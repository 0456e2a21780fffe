"""No data config selects a model on the split it reports as test, and SQuAD carves its dev set from train by
article (seeded), keeping the official dev set as the test set."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from elmo_bench.base.errors import DataError
from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.data.splits import split_location
from elmo_bench.tasks.registry import config_files
from elmo_bench.tasks.squad.task import SquadTask
from tests.conftest import DATA, REPO

CONF = REPO / "conf"
DATA_CONFIGS = sorted(config_files("data"))
register_resolvers()


@lru_cache(maxsize=None)
def _composed(name: str) -> str:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"data={name}"])
    return json.dumps(OmegaConf.to_container(cfg.data, resolve=True))


def _data_cfg(name: str) -> dict:
    """Data option <name> (conf/data/ or a task's conf/data/) composed and resolved (a fresh copy each call)."""
    return json.loads(_composed(name))


@pytest.mark.parametrize("name", DATA_CONFIGS)
@pytest.mark.parametrize("source", ["local", "hub"])
def test_no_data_config_selects_on_its_test_split(name: str, source: str) -> None:
    cfg = {**_data_cfg(name), "source": source}
    dev, test = split_location(cfg, "dev"), split_location(cfg, "test")
    if dev is None or test is None or dev != test:
        return
    ranges = cfg.get("split_by_article") or {}       # one file for both: only disjoint article ranges are fine
    assert "dev" in ranges and "test" in ranges, f"{name} ({source}): dev and test are both {dev}"
    (d0, d1), (t0, t1) = ranges["dev"], ranges["test"]
    assert d1 <= t0 or t1 <= d0, f"{name}: dev articles {ranges['dev']} overlap test articles {ranges['test']}"


def test_squad_default_tests_on_official_dev_and_carves_dev_from_train() -> None:
    cfg = _data_cfg("squad")
    assert split_location(cfg, "test") == "validation" and split_location(cfg, "dev") is None
    assert split_location({**cfg, "source": "local"}, "test").endswith("dev-v1.1.json.gz")
    assert cfg["dev_from_train"] == {"articles": 20, "seed": 0}


def _squad(n_articles: int) -> dict:
    return {"version": "1.1", "data": [
        {"title": f"T{a}", "paragraphs": [{"context": f"Article {a} says hello.", "qas": [
            {"id": f"q{a}", "question": "What does it say?", "answers": [{"text": "hello", "answer_start": 15}]}]}]}
        for a in range(n_articles)]}


def test_dev_from_train_moves_seeded_whole_articles(tmp_path: Path) -> None:
    train, official_dev = tmp_path / "train.json", tmp_path / "dev.json"
    train.write_text(json.dumps(_squad(10)), encoding="utf-8")
    official_dev.write_text(json.dumps(_squad(3)), encoding="utf-8")
    cfg = {"source": "local", "train": str(train), "dev": None, "test": str(official_dev),
           "dev_from_train": {"articles": 3, "seed": 7}}
    splits = SquadTask().read(cfg)
    dev_articles = [e["article"] for e in splits["dev"]]
    train_articles = [e["article"] for e in splits["train"]]
    assert len(dev_articles) == 3 and sorted(dev_articles + train_articles) == list(range(10))
    assert train_articles == sorted(train_articles)                     # file order kept
    assert [e["id"] for e in splits["test"]] == ["q0", "q1", "q2"]      # the official dev file, untouched
    assert [e["article"] for e in SquadTask().read(cfg)["dev"]] == dev_articles              # same seed, same dev
    other = SquadTask().read({**cfg, "dev_from_train": {"articles": 3, "seed": 8}})
    assert [e["article"] for e in other["dev"]] != dev_articles
    with pytest.raises(DataError, match="both a dev split and dev_from_train"):
        SquadTask().read({**cfg, "dev": str(official_dev)})
    with pytest.raises(DataError, match="dev_from_train.articles=10, expected between 1 and 9"):
        SquadTask().read({**cfg, "dev_from_train": {"articles": 10}})


def test_splits_of_one_file_must_not_share_articles(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(_squad(6)), encoding="utf-8")
    same = {"source": "local", "train": str(path), "dev": str(path), "test": str(path)}
    with pytest.raises(DataError, match=r"train and dev share 6 article\(s\) of .*dev\.json"):
        SquadTask().read(same)
    with pytest.raises(DataError, match=r"dev and test share 1 article\(s\) .*\(first: 3\)"):
        SquadTask().read({**same, "split_by_article": {"train": [0, 2], "dev": [2, 4], "test": [3, 6]}})


@pytest.mark.skipif(not (DATA / "squad" / "dev-v1.1.json.gz").exists(), reason="../shared/data/squad not present")
def test_squad_sandbox_keeps_train_dev_and_test_articles_apart() -> None:
    splits = SquadTask().read(_data_cfg("squad_sandbox"))
    articles = {name: {e["article"] for e in split} for name, split in splits.items()}
    assert articles["train"] == set(range(21)) and articles["dev"] == {21, 22, 23}
    assert articles["test"] == set(range(24, 48))
