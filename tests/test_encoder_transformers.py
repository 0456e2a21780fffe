"""encoder=transformers on real model code: tiny BERT (WordPiece), RoBERTa and GPT-2 (byte-level BPE) built from
configs and saved with save_pretrained (tests/hf_tiny.py), loaded through from_pretrained(DIR) as a download is."""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")

from elmo_bench.base.errors import ConfigError  # noqa: E402
from elmo_bench.encoders.transformers.encoder import TransformersEncoder  # noqa: E402
from elmo_bench.encoders.transformers.windows import best_window, word_windows  # noqa: E402
from tests.conftest import REPO  # noqa: E402
from tests.hf_tiny import KINDS, tiny_models  # noqa: E402
from tests.warm_python import run_python

SENTENCE = ["Peters", "trained", "a", "bidirectional", "model", "on", "Paris", "."]


@pytest.fixture(scope="session")
def models() -> dict[str, Path]:
    return tiny_models()


def _plain(directory: Path, words: list[str]) -> tuple[torch.Tensor, list[int | None]]:
    """The model run by hand on one pre-split sentence: (layers, positions, dim) and word ids per position."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory, add_prefix_space=True)
    model = AutoModel.from_pretrained(directory).eval()
    batch = tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        states = model(**batch, output_hidden_states=True).hidden_states
    return torch.stack(states, dim=1)[0], batch.word_ids(0)


@pytest.mark.parametrize("kind", KINDS)
def test_pooling_first_last_mean_match_hand_computed_subword_vectors(models, kind):
    hidden, word_ids = _plain(models[kind], SENTENCE)
    word = SENTENCE.index("bidirectional")
    positions = [p for p, w in enumerate(word_ids) if w == word]
    assert len(positions) >= 3  # the word is split into several subwords by the tiny vocabulary
    expected = {"first": hidden[:, positions[0]], "last": hidden[:, positions[-1]],
                "mean": hidden[:, positions].mean(dim=1)}
    for pooling, vectors in expected.items():
        encoder = TransformersEncoder(str(models[kind]), pooling=pooling)
        layers, mask = encoder.layers([SENTENCE, ["a"]])
        assert layers.shape == (2, 3, len(SENTENCE), 32) and encoder.num_layers == 3
        assert mask.tolist()[1] == [True] + [False] * (len(SENTENCE) - 1)
        torch.testing.assert_close(layers[0, :, word], vectors, rtol=1e-5, atol=1e-5)
        assert torch.all(layers[1, :, 1:] == 0)
    assert not torch.allclose(expected["first"], expected["last"])  # the three poolings do differ here


def test_every_hidden_state_is_a_layer_and_identity_names_pooling(models):
    first = TransformersEncoder(str(models["bert"]))
    mean = TransformersEncoder(str(models["bert"]), pooling="mean")
    assert first.identity()["pooling"] == "first" and mean.identity()["pooling"] == "mean"
    assert first.identity()["hash"] == mean.identity()["hash"] and first.identity() != mean.identity()
    hidden, word_ids = _plain(models["bert"], SENTENCE)
    layers, _ = first.layers([SENTENCE])
    torch.testing.assert_close(layers[0, :, 0], hidden[:, word_ids.index(0)], rtol=1e-5, atol=1e-5)
    with pytest.raises(ConfigError, match="encoder.pooling expected one of auto, first, last, mean"):
        TransformersEncoder(str(models["bert"]), pooling="max")


def test_word_windows_and_the_most_context_rule():
    cum = [0, 2, 4, 6, 8, 10, 12, 14]  # seven words of two subwords, windows of 6 subwords
    plan = word_windows(cum, 6)
    assert plan == [(0, 3), (2, 5), (4, 7)]
    assert [best_window(plan, cum, w) for w in range(7)] == [0, 0, 0, 1, 1, 2, 2]
    # ties (word 2: context 2 in window 0 and 0 in window 1... word 4: 0 in window 1, 0 in window 2) go earlier
    assert word_windows([0, 1, 2, 3], 6) == [(0, 3)]
    # the last window ends at the end and reaches back as far as it fits
    assert word_windows([0, 3, 6, 9, 12], 6) == [(0, 2), (1, 3), (2, 4)]


@pytest.mark.parametrize("kind", KINDS)
def test_windowing_equals_one_window_where_the_sentence_fits_and_the_chosen_window_otherwise(models, kind):
    big = TransformersEncoder(str(models[kind]), pooling="first")  # first subwords: word_ids.index(w) below
    hidden, word_ids = _plain(models[kind], SENTENCE)
    fits, _ = big.layers([SENTENCE])
    for w in range(len(SENTENCE)):
        torch.testing.assert_close(fits[0, :, w], hidden[:, word_ids.index(w)], rtol=1e-5, atol=1e-5)
    long = SENTENCE + ["and", "Berlin", "is", "the", "capital", "."]
    small = TransformersEncoder(str(models[kind]), max_length=24, pooling="first")  # every word fits in half a window
    windows, picks = small.plan([long])
    assert len(windows) >= 2 and all(len(w) <= 24 for w in windows)
    layers, _ = small.layers([long])
    # each word equals the plain model run on the words of the window the rule chose for it
    counts = [sum(1 for x in small._tokenize([long])[0][1] if x == w) for w in range(len(long))]
    assert max(counts) <= small.content // 2
    cum = [0]
    for c in counts:
        cum.append(cum[-1] + c)
    plan = word_windows(cum, small.content)
    assert len({best_window(plan, cum, w) for w in range(len(long))}) > 1
    for w in range(len(long)):
        a, b = plan[best_window(plan, cum, w)]
        window_hidden, window_ids = _plain(models[kind], long[a:b])
        torch.testing.assert_close(layers[0, :, w], window_hidden[:, window_ids.index(w - a)], rtol=1e-5,
                                   atol=1e-5)


def test_a_hub_name_missing_offline_is_one_line_naming_it(tmp_path):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    done = run_python(["run.py", "task=ner", "data=ner_sample", "embedder=elmo",
                       "encoder=transformers", "encoder.path=bert-base-cased", "logger=disabled",
                       f"paths.results_dir={tmp_path / 'results'}", f"paths.cache_dir={tmp_path / 'cache'}"],
                      cwd=REPO, env=env, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "'bert-base-cased'" in lines[0] and "encoder.path=DIR" in lines[0]


def _run(tmp_path: Path, run: str, *overrides: str):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment
    from tests.test_engine import _cfg

    return run_experiment(run_config(_cfg(tmp_path, "trainer.max_epochs=1", *overrides)), tmp_path / run)


@pytest.mark.parametrize("kind", KINDS)
def test_ner_trains_an_epoch_with_each_model_and_the_second_run_of_a_sweep_hits_the_cache(models, kind, tmp_path,
                                                                                          caplog):
    caplog.set_level(logging.INFO)
    overrides = ("embedder=glove_elmo", "encoder=transformers", f"encoder.path={models[kind]}")
    first = _run(tmp_path, "run1", *overrides)
    assert "activation cache miss" in caplog.text
    saved = json.loads((tmp_path / "run1" / "results.json").read_text())
    assert saved["encoder"]["kind"] == "transformers" and saved["encoder"]["model_type"] == kind
    assert saved["encoder"]["layers"] == 3 and saved["encoder"]["dim"] == 32 and saved["bilm"] is None
    assert len(saved["mixes"]["input"]["weights"]) == 3 and saved["epochs"]["run"] == 1
    assert 0.0 <= first["metrics"]["test"]["f1"] <= 100.0
    run = json.loads((tmp_path / "run1" / "run.json").read_text())
    assert run["identity"]["encoder.kind"] == "transformers" and run["identity"]["encoder.hash"].startswith(
        "transformers-")
    caplog.clear()
    second = _run(tmp_path, "run2", *overrides, "seed=2", "mix.lambda=0.5")
    assert "activation cache hit" in caplog.text and "activation cache miss" not in caplog.text
    assert second["timings"]["bilm_seconds"] == 0.0
    caplog.clear()
    _run(tmp_path, "run3", *overrides, "encoder.pooling=mean")  # another pooling: other vectors, another entry
    assert "activation cache miss" in caplog.text


def test_fp32_by_default_and_amp_runs_the_model_under_autocast(models, tmp_path):
    from tests.engine_helpers import compose_run

    fp32 = TransformersEncoder(str(models["bert"]))
    bf16 = TransformersEncoder(str(models["bert"]), amp="bf16")
    assert fp32.identity()["precision"] == "fp32" and bf16.identity()["precision"] == "bf16"
    exact, _ = fp32.layers([SENTENCE])
    rounded, _ = bf16.layers([SENTENCE])
    assert rounded.dtype == torch.float32 and not torch.equal(exact, rounded)
    torch.testing.assert_close(rounded, exact, rtol=0.1, atol=0.1)
    # the config follows the run's amp unless encoder.amp says otherwise
    cfg = compose_run(tmp_path, "task=ner", "encoder=transformers", "encoder.path=DIR", "amp=bf16", tiny=False)
    assert cfg.encoder.amp == "bf16"
    cfg = compose_run(tmp_path, "task=ner", "encoder=transformers", "encoder.path=DIR", tiny=False)
    assert cfg.encoder.amp == "off"


def test_a_word_longer_than_half_a_window_is_given_the_unknown_token(models):
    small = TransformersEncoder(str(models["bert"]), max_length=12)  # content 10: words of more than 5 subwords
    windows, picks = small.plan([SENTENCE])
    (row, first, last), = [(p[2], p[3], p[4]) for p in picks if p[1] == SENTENCE.index("bidirectional")]
    assert first == last and windows[row][first] == small.tokenizer.unk_token_id
    layers, _ = small.layers([SENTENCE])
    assert layers.shape == (1, 3, len(SENTENCE), 32) and bool(torch.all(layers.abs().sum(dim=-1) > 0))


def test_evaluate_rebuilds_a_transformers_run(models, tmp_path):
    from elmo_bench.engine.evaluate import evaluate_run_dir

    results = _run(tmp_path, "run", "embedder=elmo", "encoder=transformers", f"encoder.path={models['gpt2']}")
    again = evaluate_run_dir(tmp_path / "run", device="cpu")
    assert again["metrics"]["test"] == pytest.approx(results["metrics"]["test"])
