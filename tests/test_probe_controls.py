"""Issue 36: the control task, the papers' probes and regimen, random encoders, the best layer's bootstrap."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from elmo_bench.probe.lib.classifiers import ProbeSpec, build_probe
from elmo_bench.probe.lib.control import control_labels, relabel, training_distribution
from elmo_bench.probe.lib.layer_choice import best_layer, paired_difference
from elmo_bench.probe.lib.regimen import Regimen, predict, train_probe
from tests.conftest import FIXTURES, needs_fixtures

TRAIN = [["The", "dog", "runs"], ["the", "cat", "runs", "."], ["A", "dog", "."]]
TRAIN_TAGS = [["DT", "NN", "VBZ"], ["DT", "NN", "VBZ", "."], ["DT", "NN", "."]]
DEV = [["The", "cat", "sleeps"]]
TEST = [["dog", "runs", "home", "."]]
LABELS = [".", "DT", "NN", "VBZ"]


def test_control_labels_are_a_function_of_the_type_fixed_by_the_seed():
    mapping = control_labels([TRAIN, DEV, TEST], TRAIN_TAGS, LABELS, seed=3)
    types = {w for s in TRAIN + DEV + TEST for w in s}
    assert set(mapping) == types and set(mapping.values()) <= set(LABELS)
    # every token of a type carries the type's label, in every sentence and split; "The" and "the" are two types
    for sentences in (TRAIN, DEV, TEST):
        for words, tags in zip(sentences, relabel(sentences, mapping)):
            assert tags == [mapping[w] for w in words]
    assert control_labels([TRAIN, DEV, TEST], TRAIN_TAGS, LABELS, seed=3) == mapping
    assert any(control_labels([TRAIN, DEV, TEST], TRAIN_TAGS, LABELS, seed=s) != mapping for s in range(4, 10))


def test_control_labels_follow_the_authors_order_of_draws():
    """control-tasks: types in first-occurrence order over train, dev, test; np.random.seed(seed); one shuffle, then
    one np.random.choice per type in the shuffled order, p = the training tag distribution."""
    seed = 11
    order = list(dict.fromkeys(w for s in TRAIN + DEV + TEST for w in s))
    p = np.array([2, 3, 3, 2]) / 10                      # . DT NN VBZ among the 10 training tokens
    np.random.seed(seed)
    np.random.shuffle(order)
    expected = {w: LABELS[int(np.random.choice(list(range(4)), p=p))] for w in order}
    assert control_labels([TRAIN, DEV, TEST], TRAIN_TAGS, LABELS, seed) == expected
    assert training_distribution(TRAIN_TAGS, LABELS) == pytest.approx(p)


def test_control_label_distribution_matches_the_training_tags():
    rng = np.random.default_rng(0)
    tags = ["NN"] * 50 + ["DT"] * 30 + ["VB"] * 20
    words = [[f"w{i}"] for i in range(20000)]
    train_tags = [[tags[int(rng.integers(0, 100))]] for _ in words]
    labels = sorted(set(tags))
    mapping = control_labels([words, [], []], train_tags, labels, seed=1)
    share = Counter(mapping.values())
    expected = training_distribution(train_tags, labels)
    for label, p in zip(labels, expected):
        assert share[label] / len(mapping) == pytest.approx(p, abs=0.015)    # 20000 draws: sd about 0.0035


def _xor(n: int, seed: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Sentences of 5 tokens; label = XOR of the signs of two features: separable by an MLP, not by a line."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 5, 2, generator=g) * 2 - 1
    x = x + 0.2 * torch.sign(x)                         # a margin around both axes
    y = ((x[..., 0] > 0) ^ (x[..., 1] > 0)).long()
    return list(x), list(y)


def test_mlp_reaches_a_separable_toy_problems_optimum_and_linear_cannot():
    train_x, train_y = _xor(200, 0)
    dev_x, dev_y = _xor(40, 1)
    regimen = Regimen(max_epochs=40, seed=0)
    mlp = train_probe(ProbeSpec("mlp1", hidden=32), train_x, train_y, dev_x, dev_y, 2, regimen)
    assert mlp.dev_accuracy == 100.0
    assert (predict(mlp.probe, dev_x) == torch.cat(dev_y)).all()
    two = train_probe(ProbeSpec("mlp2", hidden=32), train_x, train_y, dev_x, dev_y, 2, regimen)
    assert two.dev_accuracy == 100.0
    line = train_probe(ProbeSpec("linear", rank=2), train_x, train_y, dev_x, dev_y, 2, regimen)
    assert line.dev_accuracy < 80.0                     # XOR: no line does better than 3 quadrants of 4


def test_regimen_keeps_the_best_dev_parameters_and_halves_the_rate_on_a_plateau():
    train_x, train_y = _xor(100, 2)
    dev_x, dev_y = _xor(20, 3)
    trained = train_probe(ProbeSpec("mlp1", hidden=8), train_x, train_y, dev_x, dev_y, 2,
                          Regimen(max_epochs=40, seed=1))
    losses = [h["dev_loss"] for h in trained.history]
    assert trained.dev_loss == pytest.approx(losses[trained.best_epoch - 1], rel=1e-5)
    assert trained.dev_loss <= min(losses) + 1e-3 + 1e-9
    rates = [h["lr"] for h in trained.history]
    assert rates[0] == 1e-3 and all(b in (a, a / 2) for a, b in zip(rates, rates[1:]))
    for epoch, (before, after) in enumerate(zip(losses, losses[1:]), start=1):    # halved after a dev-loss rise
        if after > before and epoch + 2 <= len(rates):
            assert rates[epoch + 1] == rates[epoch] / 2
    assert len(trained.history) == 40 or len(trained.history) - trained.best_epoch == 5   # stopped: 5 epochs no fall
    again = train_probe(ProbeSpec("mlp1", hidden=8), train_x, train_y, dev_x, dev_y, 2, Regimen(max_epochs=40, seed=1))
    assert again.dev_loss == trained.dev_loss            # same seed, same data: the same probe


def test_probe_shapes_and_rank():
    linear = build_probe(ProbeSpec("linear", rank=3), 10, 7)
    weight = linear[2].weight @ linear[1].weight
    assert weight.shape == (7, 10) and int(torch.linalg.matrix_rank(weight)) <= 3
    assert build_probe(ProbeSpec("mlp2", hidden=5), 10, 7)(torch.zeros(4, 10)).shape == (4, 7)
    with pytest.raises(ValueError):
        build_probe(ProbeSpec("mlp3"), 10, 7)


def test_bootstrap_finds_a_planted_layer_difference_and_not_a_null_one():
    rng = np.random.default_rng(0)
    tokens = rng.integers(5, 30, size=400)
    base = rng.binomial(tokens, 0.80)
    better = np.minimum(tokens, base + rng.binomial(tokens, 0.05))        # planted: about 4 points more
    chosen = best_layer({"layer_0": base[None], "layer_1": better[None], "layer_2": base[None] - 1,
                         "average": tokens[None]}, tokens)
    assert chosen["best"] == "layer_1" and chosen["runner_up"] == "layer_0"     # "average" never competes
    assert chosen["difference"] == pytest.approx(100 * (better - base).sum() / tokens.sum())
    assert chosen["p_value"] < 0.01
    noise = np.clip(base + rng.integers(-1, 2, size=400), 0, tokens)          # same accuracy up to noise
    _, p = paired_difference(noise, base, tokens, samples=1000)
    assert p > 0.05
    assert paired_difference(base, base, tokens)[1] == 1.0


@needs_fixtures
def test_random_bilm_differs_from_the_trained_one_in_identity_and_vectors_not_shape():
    from elmo_bench.encoders.bilm.encoder import load_bilm_encoder
    from elmo_bench.encoders.protocol import cache_id
    from elmo_bench.encoders.random_init import randomise

    sentences = [["The", "dog", "runs", "."], ["A", "cat"]]
    trained = load_bilm_encoder(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5")
    layers, mask = trained.layers(sentences)
    for mode in ("all", "lstm"):
        fresh = randomise(load_bilm_encoder(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5"), mode, 0)
        assert fresh.identity()["random_init"] == mode and fresh.identity()["random_seed"] == 0
        assert cache_id(fresh) != cache_id(trained) and fresh.identity() != trained.identity()
        out, out_mask = fresh.layers(sentences)
        assert out.shape == layers.shape and torch.equal(out_mask, mask)
        assert not torch.allclose(out[:, 1:], layers[:, 1:])
        same_token_layer = torch.allclose(out[:, 0], layers[:, 0])
        assert same_token_layer == (mode == "lstm")       # lstm keeps the trained token layer
    again = randomise(load_bilm_encoder(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5"), "all", 0)
    other = randomise(load_bilm_encoder(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5"), "all", 1)
    first = randomise(load_bilm_encoder(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5"), "all", 0)
    assert torch.equal(again.layers(sentences)[0], first.layers(sentences)[0])
    assert cache_id(other) != cache_id(first)


def test_random_transformer_differs_in_identity_and_vectors_not_shape():
    pytest.importorskip("transformers")
    from elmo_bench.encoders.protocol import cache_id
    from elmo_bench.encoders.random_init import randomise
    from elmo_bench.encoders.transformers.encoder import TransformersEncoder
    from tests.hf_tiny import tiny_models

    path = str(tiny_models()["bert"])
    sentences = [["The", "dog", "runs", "."], ["A", "cat"]]
    trained = TransformersEncoder(path)
    layers, mask = trained.layers(sentences)
    fresh = randomise(TransformersEncoder(path), "all", 5)     # the tiny model itself was drawn under seed 0
    assert fresh.identity()["random_init"] == "all" and "random_init" not in trained.identity()
    assert cache_id(fresh) != cache_id(trained)
    out, out_mask = fresh.layers(sentences)
    assert out.shape == layers.shape and torch.equal(out_mask, mask)
    assert not torch.allclose(out, layers)


def test_encoders_that_cannot_be_randomised_are_refused():
    from elmo_bench.base.errors import ConfigError
    from elmo_bench.encoders.random_init import check_random_init

    for kind in ("hdf5", "manylangs", "python"):
        with pytest.raises(ConfigError, match=f"encoder {kind} cannot be randomised"):
            check_random_init(kind, "all")
    with pytest.raises(ConfigError):
        check_random_init("transformers", "lstm")
    check_random_init("bilm", "lstm")
    check_random_init("hdf5", None)


@needs_fixtures
def test_run_py_bilm_random_is_a_random_bilm_with_its_own_hash(tmp_path, monkeypatch):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.prepare import load_encoder_info
    from elmo_bench.tasks.registry import registered
    from tests.engine_helpers import TINY, compose_run

    monkeypatch.setitem(registered(), "tiny", TINY)  # the whole config is typed: the tiny task's data resolves

    composed = compose_run(tmp_path, "bilm=random")
    assert composed.bilm.random_init == "all" and composed.bilm.random_seed == 0
    fixture = [f"bilm.options={FIXTURES / 'options.json'}", f"bilm.weights={FIXTURES / 'lm_weights.hdf5'}"]
    trained, trained_info = load_encoder_info(run_config(compose_run(tmp_path, *fixture)).encoder, "off")
    random, info = load_encoder_info(run_config(compose_run(tmp_path, "bilm=random", *fixture,
                                                            "bilm.random_init=lstm")).encoder, "off")
    assert info["hash"] == f"{trained_info['hash']}-random-lstm-0" and info["random_init"] == "lstm"
    assert random.identity() != trained.identity()
