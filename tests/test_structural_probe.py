"""Structural probes (Hewitt & Manning 2019): tree reader, metrics by hand, losses, and ``elmo-bench probe-structural``."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from elmo_bench.base.errors import DataError
from elmo_bench.probe.lib.conllu_trees import depths, read_trees
from elmo_bench.probe.structural import metrics as sm
from elmo_bench.probe.structural.probes import DepthProbe, DistanceProbe, l1_loss
from tests.conftest import FIXTURES, needs_fixtures

# "The old dog barked loudly ." : The→dog, old→dog, dog→barked, barked=root, loudly→barked, .→barked
HEADS = [3, 3, 4, 0, 4, 4]
XPOS = ["DT", "JJ", "NN", "VBD", "RB", "."]
UPOS = ["DET", "ADJ", "NOUN", "VERB", "ADV", "PUNCT"]


def test_tree_distances_and_depths_by_hand():
    d = sm.tree_distances(HEADS)
    assert d[0, 1] == 2 and d[0, 3] == 2 and d[1, 4] == 3 and d[2, 5] == 2 and d[3, 3] == 0
    assert np.array_equal(d, d.T)
    assert depths(HEADS) == [2, 2, 1, 0, 1, 1]


def test_uuas_of_gold_distances_is_100_and_the_linear_chain_is_counted_exactly():
    gold = sm.tree_distances(HEADS)
    punct = sm.punctuation(XPOS, UPOS)
    assert punct.tolist() == [False] * 5 + [True]
    assert sm.uuas([gold], [gold], [punct]) == (100.0, 4)
    # gold edges over the 5 words: {0-2, 1-2, 2-3, 3-4}; the chain: {0-1, 1-2, 2-3, 3-4} → 3 of 4
    assert sm.uuas([sm.linear_chain(6)], [gold], [punct]) == (75.0, 4)
    # micro average: a second sentence "a b" (1 gold edge, found) → 4 of 5
    two = sm.tree_distances([0, 1])
    assert sm.uuas([sm.linear_chain(6), two], [gold, two], [punct, np.zeros(2, bool)]) == (80.0, 5)


def test_mst_on_a_hand_made_matrix_skips_punctuation():
    m = np.array([[0, 5, 1, 9],
                  [5, 0, 2, 3],
                  [1, 2, 0, 4],
                  [9, 3, 4, 0]], dtype=float)
    assert sm.mst_edges(m, np.ones(4, bool)) == {(0, 2), (1, 2), (1, 3)}
    # word 1 is punctuation: the tree over 0, 2, 3 is 0-2 (1) and 2-3 (4)
    assert sm.mst_edges(m, np.array([True, False, True, True])) == {(0, 2), (2, 3)}


def test_spearman_of_perfect_predictions_is_one_and_averages_over_lengths_5_to_50():
    gold = sm.tree_distances(HEADS)
    deps = np.asarray(depths(HEADS), dtype=float)
    assert sm.dspr([gold * 3 + 1], [gold]) == pytest.approx(1.0)
    assert sm.nspr([deps ** 2], [deps]) == pytest.approx(1.0)
    assert sm.nspr([-deps], [deps]) == pytest.approx(-1.0)
    assert sm.nspr([deps[:4]], [deps[:4]]) is None           # length 4: outside 5..50
    # two lengths: per-length means first (6: (1 + -1)/2 = 0; 7: 1), then their mean 0.5
    seven = np.arange(7.0)
    assert sm.nspr([deps, -deps, seven], [deps, deps, seven]) == pytest.approx(0.5)
    assert sm.spearman(np.array([1.0, 2, 2, 3]), np.array([1.0, 2, 3, 4])) == pytest.approx(0.9486832980505138)


def test_root_accuracy_on_hand_made_depths_skips_punctuation():
    deps = np.asarray(depths(HEADS), dtype=float)
    punct = sm.punctuation(XPOS, UPOS)
    right = np.array([3.0, 3, 2, 1, 2, 2])
    punct_lowest = np.array([3.0, 3, 2, 1, 2, 0])               # "." is lowest but is skipped → barked
    wrong = np.array([0.5, 3, 2, 1, 2, 2])                       # "The" lowest
    assert sm.root_accuracy([right, punct_lowest, wrong], [deps] * 3, [punct] * 3) == (pytest.approx(200 / 3), 3)
    upos_punct = sm.punctuation(XPOS, UPOS, "upos")
    assert upos_punct.tolist() == punct.tolist()


def test_losses_normalise_by_n_squared_and_n_and_ignore_padding():
    pred = torch.tensor([[[0.0, 2.0], [2.0, 0.0]], [[0.0, 9.0], [9.0, 9.0]]])
    gold = torch.tensor([[[0.0, 1.0], [1.0, 0.0]], [[0.0, -1.0], [-1.0, -1.0]]])
    # sentence 1: |2-1|·2 / 4 = 0.5; sentence 2 (length 1): 0 / 1 = 0 → mean 0.25
    assert float(l1_loss(pred, gold, torch.tensor([2, 1]))) == pytest.approx(0.25)
    assert float(l1_loss(torch.tensor([[1.0, 5.0]]), torch.tensor([[0.0, -1.0]]), torch.tensor([1]))) == 1.0


def test_probes_compute_squared_distances_and_norms():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 7)
    dist, depth = DistanceProbe(7, 3), DepthProbe(7, 3)
    t = x @ dist.proj
    expected = ((t.unsqueeze(2) - t.unsqueeze(1)) ** 2).sum(-1)
    assert torch.allclose(dist(x), expected, atol=1e-5)
    assert torch.allclose(depth(x), ((x @ depth.proj) ** 2).sum(-1))


def conllu(sentences) -> str:
    """sentences: lists of (word, xpos, head)."""
    out = []
    for i, sentence in enumerate(sentences):
        out.append(f"# sent_id = s{i}")
        out += [f"{k + 1}\t{w}\t_\t{'PUNCT' if t == '.' else 'X'}\t{t}\t_\t{h}\t_\t_\t_"
                for k, (w, t, h) in enumerate(sentence)]
        out.append("")
    return "\n".join(out) + "\n"


def test_reader_drops_ranges_and_empty_nodes_and_names_bad_trees(tmp_path):
    good = tmp_path / "good.conllu"
    good.write_text("# sent_id = a\n1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n1\tdo\t_\tAUX\tVBP\t_\t2\t_\t_\t_\n"
                    "2\tn't\t_\tPART\tRB\t_\t0\t_\t_\t_\n2.1\tx\t_\t_\t_\t_\t_\t_\t_\t_\n\n")
    [s] = read_trees(good)
    assert s.tokens == ["do", "n't"] and s.heads == [2, 0] and s.xpos == ["VBP", "RB"]
    cases = {"range": ([("a", "NN", 0), ("b", "NN", 3)], ":3: HEAD 3 is out of range"),
             "noroot": ([("a", "NN", 2), ("b", "NN", 1)], ":1: sentence s0 has no root"),
             "tworoots": ([("a", "NN", 0), ("b", "NN", 0)], ":3: a second root"),
             "cycle": ([("a", "NN", 0), ("b", "NN", 3), ("c", "NN", 2)], "a cycle through word")}
    for name, (sentence, message) in cases.items():
        path = tmp_path / f"{name}.conllu"
        path.write_text(conllu([sentence]))
        with pytest.raises(DataError, match=message.replace("(", r"\(")) as info:
            read_trees(path)
        assert str(path) in str(info.value) and "\n" not in str(info.value)


TRAIN = [[("The", "DT", 2), ("dog", "NN", 3), ("barked", "VBD", 0), (".", ".", 3)],
         [("A", "DT", 2), ("cat", "NN", 3), ("ran", "VBD", 0), ("home", "NN", 3), ("fast", "RB", 3), (".", ".", 3)],
         [("Dogs", "NNS", 2), ("bark", "VBP", 0)], [("I", "PRP", 2), ("run", "VBP", 0), ("daily", "RB", 2)]]
DEV = [[("The", "DT", 2), ("cat", "NN", 3), ("ran", "VBD", 0), ("away", "RB", 3), ("today", "NN", 3)]]
TEST = [[("A", "DT", 2), ("dog", "NN", 3), ("ran", "VBD", 0), ("home", "NN", 3), ("today", "NN", 3), (".", ".", 3)]]


def _data(tmp_path):
    data = tmp_path / "ewt"
    data.mkdir()
    for split, sentences in (("train", TRAIN), ("dev", DEV), ("test", TEST)):
        (data / f"en_ewt-ud-{split}.conllu").write_text(conllu(sentences))
    return data


@needs_fixtures
def test_cli_prints_every_layer_and_the_linear_chain(tmp_path, capsys):
    from elmo_bench.commands.main import main

    argv = ["probe-structural", "--options", str(FIXTURES / "options.json"), "--weights",
            str(FIXTURES / "lm_weights.hdf5"), "--data-dir", str(_data(tmp_path)), "--cache-dir",
            str(tmp_path / "cache"), "--no-progress", "--max-epochs", "3", "--rank", "4", "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(printed["test"]) == {"layer_0", "layer_1", "layer_2"} == set(printed["dev"])
    for row in printed["test"].values():
        assert set(row) == {"uuas", "dspr", "root_acc", "nspr"}
        assert 0 <= row["uuas"] <= 100 and row["root_acc"] in (0.0, 100.0) and -1 <= row["dspr"] <= 1
    # test sentence: words 0..4 (the "." dropped), gold {0-1, 1-2, 2-3, 2-4}; chain {0-1, 1-2, 2-3, 3-4}: 3 of 4
    assert printed["baselines"]["linear_chain"]["uuas"] == 75.0
    record = json.loads((tmp_path / "o" / "results.json").read_text())
    assert record["task"] == "structural_probe"
    assert record["metrics"]["test"]["layer_1_uuas"] == printed["test"]["layer_1"]["uuas"]


def test_cli_bad_tree_is_one_line_and_writes_nothing(tmp_path, capsys):
    from elmo_bench.commands.main import main

    data = _data(tmp_path)
    (data / "en_ewt-ud-dev.conllu").write_text(conllu([[("a", "NN", 0), ("b", "NN", 0)]]))
    out = tmp_path / "o"
    assert main(["probe-structural", "--data-dir", str(data), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "en_ewt-ud-dev.conllu:3" in err[0]
    assert not out.exists()


def write_layers(path, sentences, layers=2, dim=6, seed=0):
    """An ELMo-layout HDF5 file (keys "0", "1", ... and sentence_to_index) with random layers per sentence."""
    import h5py

    rng = np.random.default_rng(seed)
    with h5py.File(path, "w") as out:
        index = {}
        for i, tokens in enumerate(sentences):
            out.create_dataset(str(i), data=rng.standard_normal((layers, len(tokens), dim)).astype(np.float32))
            index[" ".join(tokens)] = str(i)
        table = out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())
        table[0] = json.dumps(index)


def test_cli_reads_hdf5_layers_and_names_a_missing_sentence(tmp_path, capsys):
    from elmo_bench.commands.main import main

    data = _data(tmp_path)
    words = [[w for w, _, _ in s] for s in TRAIN + DEV + TEST]
    full, short = tmp_path / "full.hdf5", tmp_path / "short.hdf5"
    write_layers(full, words)
    write_layers(short, words[:-1])                               # the test sentence is missing
    common = ["probe-structural", "--encoder", "hdf5", "--data-dir", str(data), "--no-progress", "--max-epochs", "2"]
    assert main([*common, "--model", str(full), "--cache-dir", str(tmp_path / "c1")]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(printed["test"]) == {"layer_0", "layer_1"}
    out = tmp_path / "o"
    assert main([*common, "--model", str(short), "--cache-dir", str(tmp_path / "c2"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sentence 'A dog ran home today .' is not in sentence_to_index" in err[0]
    assert str(short) in err[0] and not out.exists()


@needs_fixtures
def test_probe_suite_runs_each_probe_once_and_resumes(tmp_path, capsys):
    from elmo_bench.commands.main import main

    out = tmp_path / "suite"
    argv = ["probe-suite", "--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--data-dir", str(_data(tmp_path)), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
            "--probes", "structural,pos", "--out", str(out)]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert first["budget"] == "cpu" and first["bounds"]["structural"]["max_epochs"] == 10
    assert {k: v["status"] for k, v in first["probes"].items()} == {"pos": "ran", "structural": "ran"}
    record = json.loads((out / "structural" / "results.json").read_text())
    settings = record["config"]["probe"]                # the run's probe settings: budget=cpu's bounds
    assert settings["max_epochs"] == 10 and settings["max_train_sentences"] == 2000 and record["seed"] == 0
    assert json.loads((out / "pos" / "results.json").read_text())["task"] == "pos_probe"
    stamp = (out / "structural" / "results.json").stat().st_mtime_ns
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert all(v["status"] == "finished before" for v in again["probes"].values())
    assert again["probes"] == {k: {**v, "status": "finished before"} for k, v in first["probes"].items()}  # times kept
    assert (out / "structural" / "results.json").stat().st_mtime_ns == stamp
    assert main([*argv[:-2], "--budget", "full", "--out", str(out)]) == 2   # another budget: another identity
    err = capsys.readouterr().err
    assert "made by a different configuration" in err and "probe.max_train_sentences: 2000 → null" in err


@needs_fixtures
def test_cli_probes_a_random_encoder_under_its_own_identity(tmp_path, capsys):
    """``--random-init all`` (as probe-pos takes it): the random twin of the biLM is probed under another cache
    identity, and a kind without random weights (hdf5) is refused in one line before anything is read."""
    from elmo_bench.commands.main import main

    argv = ["probe-structural", "--options", str(FIXTURES / "options.json"), "--weights",
            str(FIXTURES / "lm_weights.hdf5"), "--data-dir", str(_data(tmp_path)), "--cache-dir",
            str(tmp_path / "cache"), "--no-progress", "--max-epochs", "1", "--rank", "4", "--layers", "1"]
    assert main(argv) == 0
    trained = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main([*argv, "--random-init", "all"]) == 0
    random = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert random["encoder"] != trained["encoder"] and set(random["test"]) == {"layer_1"}
    assert main([*argv, "--encoder", "hdf5", "--model", str(tmp_path / "x.hdf5"), "--random-init", "all"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "random" in err[0]


@needs_fixtures
def test_probe_suite_runs_the_control_probes_on_a_random_encoder(tmp_path, capsys):
    """The suite's control-task entry (probe-pos --probe linear,mlp1 --control, the budget's hidden size) gets the
    suite's --random-init, and OUT/suite.json records it."""
    from elmo_bench.commands.main import main

    out = tmp_path / "suite"
    argv = ["probe-suite", "--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--data-dir", str(_data(tmp_path)), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
            "--probes", "pos_controls", "--random-init", "all", "--random-seed", "2", "--out", str(out)]
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["probes"]["pos_controls"]["status"] == "ran" and record["random_init"] == "all"
    pos = json.loads((out / "pos_controls" / "results.json").read_text())
    assert pos["config"]["bilm"]["random_init"] == "all" and pos["config"]["bilm"]["random_seed"] == 2
    settings = pos["config"]["probe"]
    assert settings["probe"] == ["linear", "mlp1"] and settings["hidden"] == 256 and settings["control"]
