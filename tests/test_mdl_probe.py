"""Online codelength (Voita & Titov 2020): block boundaries, a perfect probe, noise labels, ``elmo-bench probe-mdl``."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.mdl import online_code as mdl
from tests.conftest import FIXTURES, needs_fixtures


def test_block_boundaries_are_the_authors_int_cuts():
    assert mdl.block_ends(1000) == [1, 2, 4, 8, 16, 32, 62, 125, 250, 500, 1000]
    assert mdl.block_ends(12543) == [12, 25, 50, 100, 200, 401, 783, 1567, 3135, 6271, 12543]
    assert mdl.empty_block(1000) is None and mdl.empty_block(999) == 0
    with pytest.raises(ConfigError, match=r"block 1 .* N = 999\) has no sentence; expected "
                                          r"probe.max_train_sentences of at least 1000") as info:
        mdl.check_blocks(999)      # the config key (run.py probe=mdl); probe-mdl names its flag (test below)
    assert "\n" not in str(info.value) and info.value.key == "probe.max_train_sentences"
    # a schedule whose second block is empty at small N: the smallest N is found by search
    with pytest.raises(ConfigError, match=r"block 2 \(sentences 0.5·N to 0.6·N, N = 4\) .* at least 5 "):
        mdl.check_blocks(4, (0.5, 0.6, 1.0))


def _data(n_sentences: int, k: int, noise: bool, seed: int, length: int = 3) -> mdl.TokenData:
    """Sentences of ``length`` tokens; features one-hot of the label (×4) unless ``noise`` (then random labels)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n_sentences * length)
    if noise:
        features = rng.standard_normal((len(labels), 8)).astype(np.float32)
    else:
        features = (4.0 * np.eye(k, dtype=np.float32)[labels]) + 0.01 * rng.standard_normal((len(labels), k)).astype(
            np.float32)
    return mdl.TokenData(features, labels.astype(np.int64), np.full(n_sentences, length, dtype=np.int64))


class TableProbe:
    """A probe that memorises each training feature vector's label (certain) and is uniform on unseen vectors."""

    def __init__(self, train: mdl.TokenData, k: int) -> None:
        self.k = k
        self.table = {row.tobytes(): int(y) for row, y in zip(train.features, train.labels)}

    def log_probs(self, data: mdl.TokenData) -> np.ndarray:
        out = np.full((len(data.features), self.k), -math.log(self.k))
        for i, row in enumerate(data.features):
            if row.tobytes() in self.table:
                out[i] = -np.inf
                out[i, self.table[row.tobytes()]] = 0.0
        return out


def test_a_perfect_probe_costs_exactly_the_first_blocks_uniform_code():
    k = 4
    labels = np.tile(np.arange(k), 1000)                          # 1000 sentences of 4 tokens, each all 4 tags
    data = mdl.TokenData(np.eye(k, dtype=np.float32)[labels], labels.astype(np.int64), np.full(1000, 4))
    code = mdl.online_codelength(data, data, k, lambda train, dev, seed: TableProbe(train, k))
    assert code.blocks[0] == {"end": 1, "tokens": 4, "bits": 4 * 2.0}
    assert [b["bits"] for b in code.blocks[1:]] == [0.0] * 10
    assert code.online_bits == 8.0 and code.uniform_bits == 4000 * 2.0 and code.compression == 1000.0
    assert [b["end"] for b in code.blocks] == mdl.block_ends(1000)
    assert sum(b["tokens"] for b in code.blocks) == 4000


def test_the_linear_probe_compresses_a_learnable_task_and_not_noise():
    trainer = mdl.LinearProbeTrainer(num_classes=4, max_epochs=10)
    clean = mdl.online_codelength(_data(1000, 4, False, 0), _data(40, 4, False, 1), 4, trainer)
    noise = mdl.online_codelength(_data(1000, 4, True, 0), _data(40, 4, True, 1), 4, trainer)
    assert clean.uniform_bits == noise.uniform_bits == 3000 * 2.0
    assert clean.compression > 1.5                                # learnable: far below the uniform code
    assert 0.9 < noise.compression < 1.05                         # noise: about uniform, never much better
    assert mdl.accuracy(clean.final, _data(40, 4, False, 2)) == 100.0
    # bits are log2: the first block alone is its tokens × log2 K
    assert clean.blocks[0]["bits"] == 3 * 2.0


def test_take_keeps_whole_sentences_in_the_given_order():
    data = mdl.TokenData(np.arange(6, dtype=np.float32)[:, None], np.arange(6), np.array([1, 2, 3]))
    part = data.take([2, 0])
    assert part.features[:, 0].tolist() == [3, 4, 5, 0] and part.lengths.tolist() == [3, 1]


def _ewt(tmp_path, n_train: int):
    """A tiny EWT-like directory: ``n_train`` training sentences drawn from a few tagged patterns."""
    patterns = [[("the", "DT"), ("dog", "NN"), ("runs", "VBZ")], [("a", "DT"), ("cat", "NN"), ("sleeps", "VBZ")],
                [("dogs", "NNS"), ("bark", "VBP")], [("I", "PRP"), ("run", "VBP"), (".", ".")]]
    data = tmp_path / "ewt"
    data.mkdir()
    # dev and test: the same tags in other sentences (a split that is train's own sentences is refused at the door)
    dev = [[("a", "DT"), ("dog", "NN"), ("runs", "VBZ")], [("the", "DT"), ("cat", "NN"), ("sleeps", "VBZ")],
           [("cats", "NNS"), ("bark", "VBP")], [("I", "PRP"), ("bark", "VBP"), (".", ".")]]
    test = [[("the", "DT"), ("dog", "NN"), ("sleeps", "VBZ")], [("a", "DT"), ("cat", "NN"), ("runs", "VBZ")],
            [("dogs", "NNS"), ("run", "VBP")], [("dogs", "NNS"), ("bark", "VBP"), (".", ".")]]
    splits = {"train": [patterns[i % 4] for i in range(n_train)], "dev": dev, "test": test}
    for split, sentences in splits.items():
        lines = []
        for sentence in sentences:
            lines += [f"{k + 1}\t{w}\t_\tX\t{t}\t_\t0\t_\t_\t_" for k, (w, t) in enumerate(sentence)] + [""]
        (data / f"en_ewt-ud-{split}.conllu").write_text("\n".join(lines) + "\n")
    return data


@needs_fixtures
def test_cli_prints_the_contract_and_names_a_too_small_training_set(tmp_path, capsys):
    from elmo_bench.commands.main import main

    data = _ewt(tmp_path, 1000)
    argv = ["probe-mdl", "--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--data-dir", str(data), "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--max-epochs", "2",
            "--layers", "0,1"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(printed["train"]) == {"layer_0", "layer_1"} == set(printed["test"])
    row = printed["train"]["layer_1"]
    tokens = 250 * (3 + 3 + 2 + 3)
    assert row["uniform_bits"] == pytest.approx(tokens * math.log2(7), abs=0.01)   # 7 tags: DT NN VBZ NNS VBP PRP .
    assert [b["end"] for b in row["blocks"]] == mdl.block_ends(1000)
    assert row["online_bits"] == pytest.approx(sum(b["bits"] for b in row["blocks"]), abs=0.1)
    assert row["compression"] == pytest.approx(row["uniform_bits"] / row["online_bits"], rel=1e-3)
    assert 0 <= printed["test"]["layer_1"]["accuracy"] <= 100
    record = json.loads((tmp_path / "o" / "results.json").read_text())
    assert record["task"] == "mdl_probe" and record["probes"]["units"] == "bits"
    out = tmp_path / "o2"
    assert main([*argv, "--max-train-sentences", "999", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "block 1" in err[0] and not out.exists()
    assert err[0].endswith("has no sentence; expected --max-train-sentences of at least 1000 for this schedule")


@pytest.mark.parametrize("kind", ["mlp1", "mlp2"])
def test_the_papers_mlp_probes_plug_in_and_compress_a_learnable_task_and_not_noise(kind):
    """The mdl probe's FACTORIES (elmo_bench/probe/mdl/probe.py) hold Hewitt & Liang's MLPs trained by the shared
    regimen: a one-hot-learnable task is coded far below its uniform code, noise is not (its online code stays near
    uniform, compression < 1.1)."""
    import torch

    from elmo_bench.probe.mdl.config import MdlSettings
    from elmo_bench.probe.mdl.probe import FACTORIES

    factory = FACTORIES[kind](4, MdlSettings(hidden=16, max_epochs=15), torch.device("cpu"))
    easy = mdl.online_codelength(_data(1000, 4, False, 0), _data(50, 4, False, 1), 4, factory, seed=0)
    noise = mdl.online_codelength(_data(1000, 4, True, 2), _data(50, 4, True, 3), 4, factory, seed=0)
    assert easy.compression > 3 and noise.compression < 1.1
    assert mdl.accuracy(easy.final, _data(50, 4, False, 4)) > 95


def test_control_labels_cost_more_than_tags_and_random_init_is_recorded(tmp_path, capsys):
    """``--control`` also codes Hewitt & Liang's per-type random labels, printed under ``"control"`` as the tags'
    are under ``"train"``/``"test"``: on the fixture biLM they cost more bits than the tags (a word's tag is mostly
    predictable from its layer-0 vector, its control label only by memorising); ``--random-init all`` probes a random
    biLM, recorded in results.json."""
    from elmo_bench.commands.main import main

    data = _ewt(tmp_path, 1000)
    argv = ["probe-mdl", "--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--data-dir", str(data), "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--max-epochs", "2",
            "--layers", "0"]
    assert main([*argv]) == 0
    tags = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert "control" not in tags
    assert main([*argv, "--control", "--out", str(tmp_path / "c")]) == 0
    both = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert both["train"] == tags["train"] and both["test"] == tags["test"]     # the task's codes unchanged
    control = both["control"]
    assert set(control) == {"train", "test"} and set(control["train"]["layer_0"]) == set(tags["train"]["layer_0"])
    assert control["train"]["layer_0"]["uniform_bits"] == tags["train"]["layer_0"]["uniform_bits"]
    assert control["train"]["layer_0"]["online_bits"] > tags["train"]["layer_0"]["online_bits"]
    record = json.loads((tmp_path / "c" / "results.json").read_text())
    assert record["metrics"]["train"]["control_layer_0_online_bits"] == control["train"]["layer_0"]["online_bits"]
    assert record["main_metric"] == "layer_0_compression" and "control" in record["probes"]
    assert main([*argv, "--random-init", "all", "--random-seed", "3", "--out", str(tmp_path / "r")]) == 0
    random = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert random["encoder"] != tags["encoder"]                   # another cache identity: never mixed with trained
    record = json.loads((tmp_path / "r" / "results.json").read_text())
    assert record["config"]["bilm"]["random_init"] == "all" and record["config"]["bilm"]["random_seed"] == 3
    assert record["encoder"]["random_init"] == "all" and record["encoder"]["random_seed"] == 3
