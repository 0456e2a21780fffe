"""The 1-NN sense probe: a sense distinction planted in one layer is found in that layer; fallbacks; the CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest

from elmo_bench.probe.lib.semcor import SenseSpan, WsdSentence
from elmo_bench.probe.wsd import centroids as wsd
from elmo_bench.records.run_record import REQUIRED_KEYS
from tests.conftest import FIXTURES, needs_fixtures

RIVER, MONEY = "bank%1:17:01::", "bank%1:14:00::"
DIM = 6


class PlantedLayers:
    """Sentences of 3 tokens, "bank" in the middle: layer 1 separates the two senses, layers 0 and 2 are noise."""

    def __init__(self, senses, seed):
        rng = np.random.default_rng(seed)
        self.arrays = []
        for sense in senses:
            array = rng.normal(0, 1, (3, 3, DIM)).astype(np.float32)
            array[1, 1] = rng.normal(0, 0.2, DIM) + (np.eye(DIM)[0] if sense == RIVER else np.eye(DIM)[1]) * 3
            self.arrays.append(array)

    def get(self, index):
        return self.arrays[index]


def _sentences(senses, tagged):
    return [WsdSentence(f"s{i}", ["the", "bank", "."], [SenseSpan(f"s{i}.t0", 1, 2, "bank", "n",
                                                                     (k,) if tagged else ())])
            for i, k in enumerate(senses)]


def test_planted_sense_is_found_in_its_layer():
    rng = np.random.default_rng(0)
    train_senses = [RIVER, MONEY] * 15
    test_senses = [RIVER if x else MONEY for x in rng.integers(0, 2, 40)]
    centroids = wsd.build_centroids(_sentences(train_senses, True), PlantedLayers(train_senses, 1), progress=False)
    assert centroids.views == ["layer_0", "layer_1", "layer_2", "average"] and sorted(centroids.keys) == [MONEY, RIVER]
    test = _sentences(test_senses, False)
    predictions, how = wsd.disambiguate(centroids, test, PlantedLayers(test_senses, 2), {}, progress=False)
    accuracy = {view: np.mean([predictions[view][s.spans[0].id] == k for s, k in zip(test, test_senses)])
                for view in centroids.views}
    assert accuracy["layer_1"] == 1.0 and max(accuracy, key=accuracy.get) == "layer_1"
    assert accuracy["layer_0"] < 0.8 and accuracy["layer_2"] < 0.8, accuracy
    assert how == {"1nn": 40}


def test_centroid_is_the_span_mean_and_cosine_picks_the_nearest():
    layers = np.zeros((2, 3, 2), dtype=np.float32)  # (L+1, tokens, dim)
    layers[0, 0], layers[0, 1], layers[1, 0], layers[1, 1] = [1, 0], [3, 0], [0, 1], [0, 3]
    span = SenseSpan("x", 0, 2, "w", "n")
    views = wsd.span_views(layers, span)
    assert views.tolist() == [[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]]


def test_fallbacks_mfs_then_wordnet_then_unanswered():
    counts = wsd.sense_counts(_sentences([RIVER, MONEY, MONEY], True))
    mfs = wsd.most_frequent_senses(counts)
    assert mfs == {("bank", "n"): MONEY}
    centroids = wsd.build_centroids(_sentences([RIVER], True), PlantedLayers([RIVER], 0), progress=False)
    test = [WsdSentence("t", ["a", "b", "c"], [SenseSpan("i0", 0, 1, "bank", "v"), SenseSpan("i1", 1, 2, "cat", "n"),
                                              SenseSpan("i2", 2, 3, "dog", "n")])]
    layers = PlantedLayers([RIVER], 5)
    wordnet = {("cat", "n"): "cat%1:05:00::"}.get
    predictions, how = wsd.disambiguate(centroids, test, layers, {("bank", "v"): "bank%2:31:00::"},
                                        lambda lemma, pos: wordnet((lemma, pos)), progress=False)
    assert predictions["layer_1"] == {"i0": "bank%2:31:00::", "i1": "cat%1:05:00::"}  # dog: unanswered
    assert predictions["mfs"] == predictions["layer_1"]
    assert predictions["wordnet_first_sense"] == {"i1": "cat%1:05:00::"}           # WordNet alone: no bank verb
    assert how == {"mfs": 1, "wordnet": 1, "none": 1}
    without, _ = wsd.disambiguate(centroids, test, layers, {}, None, progress=False)
    assert "wordnet_first_sense" not in without and without["mfs"] == {}


SEMCOR = """<contextfile concordance="brown"><context filename="br-z01" paras="yes"><p pnum="1">
<s snum="1"><wf cmd="done" pos="NN" lemma="bank" wnsn="1" lexsn="1:17:01::">bank</wf><wf cmd="ignore" pos="IN">of</wf>
<wf cmd="done" pos="NN" lemma="river" wnsn="1" lexsn="1:17:00::">rivers</wf><punc>.</punc></s>
<s snum="2"><wf cmd="done" pos="NN" lemma="bank" wnsn="2" lexsn="1:14:00::">bank</wf><wf cmd="done" pos="VB" lemma="lend" wnsn="1" lexsn="2:40:00::">lends</wf></s>
</p></context></contextfile>
"""
XML = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="toy"><text id="d000"><sentence id="d000.s000">
<instance id="d000.s000.t000" lemma="bank" pos="NOUN">bank</instance><wf lemma="of" pos="ADP">of</wf>
<instance id="d000.s000.t001" lemma="river" pos="NOUN">rivers</instance>
<instance id="d000.s000.t002" lemma="otter" pos="NOUN">otters</instance></sentence></text></corpus>
"""


@needs_fixtures
def test_cli_writes_keys_and_results(tmp_path, capsys, monkeypatch):
    nltk = pytest.importorskip("nltk", reason="nltk is a dependency of the WSD probe (pip install nltk)")
    from elmo_bench.commands.main import main
    from elmo_bench.probe.wsd.metric import score_files
    from tests.test_wordnet import make_wordnet

    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))
    make_wordnet(tmp_path / "wordnet")       # bank: institution first; river; no otter

    (tmp_path / "semcor").mkdir()
    (tmp_path / "semcor" / "brown1_br-z01").write_text(SEMCOR)
    (tmp_path / "eval" / "toy").mkdir(parents=True)
    (tmp_path / "eval" / "toy" / "toy.data.xml").write_text(XML)
    gold = tmp_path / "eval" / "toy" / "toy.gold.key.txt"
    gold.write_text("d000.s000.t000 bank%1:17:01::\nd000.s000.t001 river%1:17:00::\nd000.s000.t002 otter%1:05:00::\n")
    code = main(["probe-wsd", "--options", str(FIXTURES / "options.json"), "--weights",
                 str(FIXTURES / "lm_weights.hdf5"), "--semcor", str(tmp_path / "semcor"), "--eval-root",
                 str(tmp_path / "eval"), "--sets", "toy", "--cache-dir", str(tmp_path / "cache"), "--wordnet",
                 str(tmp_path / "wordnet"), "--wordnet-work", str(tmp_path / "nltk"), "--no-progress",
                 "--out", str(tmp_path / "out")])
    assert code == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert set(REQUIRED_KEYS) <= set(results) and results["task"] == "wsd"
    metrics = results["metrics"]["toy"]
    assert {"layer_0_f1", "layer_1_f1", "layer_2_f1", "average_f1", "mfs_f1"} <= set(metrics)
    assert printed["toy"]["layer_2_f1"] == pytest.approx(metrics["layer_2_f1"], abs=0.01)
    # river has one training sense (always right); otter unseen and no WordNet: unanswered → recall ≤ 2/3
    for view in ("layer_0", "layer_1", "layer_2", "average"):
        assert metrics[f"{view}_recall"] <= 100 * 2 / 3 + 1e-9 and metrics[f"{view}_recall"] >= 100 / 3 - 1e-9
        assert score_files(str(gold), str(tmp_path / "out" / "keys" / f"toy.{view}.key"))["f1"] == pytest.approx(
            metrics[f"{view}_f1"])
    assert results["data"]["answered_by"]["toy"] == {"1nn": 2, "none": 1}
    assert results["data"]["coverage"]["toy"]["layer_1"] == [2, 3] and metrics["layer_1_coverage"] == pytest.approx(200 / 3)
    # WordNet's first sense alone: bank → the institution (wrong), river right, otter unanswered: P 1/2, R 1/3
    assert results["data"]["coverage"]["toy"]["wordnet_first_sense"] == [2, 3]
    assert metrics["wordnet_first_sense_precision"] == pytest.approx(50.0)
    assert metrics["wordnet_first_sense_f1"] == pytest.approx(40.0)
    assert printed["toy"]["wordnet_first_sense_coverage"] == pytest.approx(66.67)
