"""``elmo-bench probe-pos``: every row in one JSON object, the baseline computed by hand, the biLM run once."""
from __future__ import annotations

import json

import pytest

from elmo_bench.probe.lib.features import baseline_accuracy, most_frequent_tag, tag_ids
from tests.conftest import FIXTURES, needs_fixtures

TRAIN = [[("I", "PRP"), ("run", "VBP"), ("fast", "RB")], [("We", "PRP"), ("run", "VBP")],
         [("a", "DT"), ("run", "NN")], [("The", "DT"), ("dog", "NN"), ("runs", "VBZ")],
         [("dogs", "NNS"), ("run", "VBP"), (".", ".")], [("a", "DT"), ("dog", "NN"), (".", ".")]]
DEV = [[("the", "DT"), ("run", "NN")], [("Dogs", "NNS"), ("bark", "VBP")]]
TEST = [[("I", "PRP"), ("run", "VBP"), ("home", "NN")], [("a", "DT"), ("cat", "NN"), ("runs", "VBZ"), ("!", "UH")]]


def conllu(sentences) -> str:
    out = []
    for i, sentence in enumerate(sentences):
        out.append(f"# sent_id = s{i}")
        out += [f"{k + 1}\t{w}\t_\tX\t{t}\t_\t0\t_\t_\t_" for k, (w, t) in enumerate(sentence)]
        out.append("")
    return "\n".join(out) + "\n"


def examples(sentences):
    return [{"tokens": [w for w, _ in s], "tags": [t for _, t in s]} for s in sentences]


def test_most_frequent_tag_by_hand():
    tagger = most_frequent_tag(examples(TRAIN))
    assert tagger("run") == "VBP"                      # 3 VBP against 1 NN
    assert tagger("Dog") == "NN" and tagger("The") == "DT"   # lower-cased form; exact form
    assert tagger("cat") == "DT"                       # unseen: the most frequent tag overall (DT 3, NN 3, PRP 2,
    #                                                    VBP 3: ties go to the alphabetically first)
    # test: I/PRP run/VBP home→DT (NN) | a/DT cat→DT (NN) runs/VBZ !→DT (UH): 4 of 7
    assert baseline_accuracy(examples(TRAIN), examples(TEST)) == pytest.approx(100 * 4 / 7)
    assert tag_ids(examples(TEST), ["NN", "PRP"]).tolist() == [1, -1, 0, -1, 0, -1, -1]


@needs_fixtures
def test_cli_prints_every_row_and_reuses_the_cache(tmp_path, capsys):
    from elmo_bench.commands.main import main

    data = tmp_path / "ewt"
    data.mkdir()
    for split, sentences in (("train", TRAIN), ("dev", DEV), ("test", TEST)):
        (data / f"en_ewt-ud-{split}.conllu").write_text(conllu(sentences))
    argv = ["probe-pos", "--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--data-dir", str(data), "--cache-dir", str(tmp_path / "cache"), "--l2-grid", "1e-2,1e-3",
            "--no-progress", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rows = {"layer_0", "layer_1", "layer_2", "average", "glove", "most_frequent_tag"}
    assert set(printed["test"]) == rows and set(printed["dev"]) == rows
    assert printed["test"]["most_frequent_tag"] == pytest.approx(round(100 * 4 / 7, 2))
    assert printed["train_sentences"] == 6 and printed["test_tokens"] == 7
    assert all(0.0 <= v <= 100.0 for v in printed["test"].values())
    assert set(printed["l2"]) == rows - {"most_frequent_tag"} and set(printed["l2"].values()) <= {1e-2, 1e-3}
    # "!" (UH) never occurs in training: no row can get it right
    assert max(printed["test"].values()) <= 100 * 6 / 7 + 1e-9
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["task"] == "pos_probe" and results["metrics"]["test"]["layer_1_accuracy"] == pytest.approx(
        printed["test"]["layer_1"], abs=0.005)
    assert results["timings"]["bilm_seconds"] > 0
    assert main([*argv[:-1], str(tmp_path / "out2"), "--max-train-sentences", "6", "--no-glove"]) == 0
    again = json.loads((tmp_path / "out2" / "results.json").read_text())
    assert again["timings"]["bilm_seconds"] == 0.0                       # every split came from the cache
    assert again["metrics"]["test"]["layer_1_accuracy"] == results["metrics"]["test"]["layer_1_accuracy"]
