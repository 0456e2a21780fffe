"""probe=lens (issue 57 item 1): the logit lens and the tuned lens on the biLM (bilm-tf's tiny fixture given a
softmax here) and on a tiny Llama causal LM built offline. The last layer's logit lens is the model's own
distribution (the causal LM's logits, the biLM's LM evaluation); the biLM's lens is the shared softmax on each half
of a layer, by hand; an untrained tuned lens is the logit lens, training lowers its KL, and the record holds the
contract's keys."""
from __future__ import annotations

import json
import math
import shutil

import h5py
import numpy as np
import pytest
import torch

from elmo_bench.base.errors import ConfigError
from tests.conftest import FIXTURES, REPO, needs_data, needs_fixtures
from tests.test_structural_probe import conllu

WORDS = ("the dog cat bird man woman saw heard liked a house garden tree sun rain ran home today quickly slowly "
         "big small red old new and or but with under over").split()
MEASURES = ("bits", "bits_lo", "bits_hi", "ppl", "kl", "kl_lo", "kl_hi", "top1", "top1_lo", "top1_hi", "agree",
            "agree_lo", "agree_hi")


def _sentences(count: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [[str(w) for w in rng.choice(WORDS, size=int(rng.integers(3, 9)))] + ["."] for _ in range(count)]


def _ewt(tmp_path, train: int = 24, dev: int = 8):
    """Tiny UD EWT files of random sentences over WORDS (distinct splits)."""
    data = tmp_path / "ewt"
    data.mkdir()
    drawn = {"train": _sentences(train, 1), "dev": _sentences(dev, 2), "test": _sentences(4, 3)}
    for split, sentences in drawn.items():
        rows = [[(w, "NN", 0 if k == 0 else 1) for k, w in enumerate(s)] for s in sentences]
        (data / f"en_ewt-ud-{split}.conllu").write_text(conllu(rows))
    return data


@pytest.fixture(scope="module")
def lm_fixture(tmp_path_factory):
    """bilm-tf's fixture biLM with a softmax added (softmax/W, softmax/b drawn here) and a vocab.txt beside it."""
    root = tmp_path_factory.mktemp("lens_bilm")
    weights = root / "lm_weights.hdf5"
    shutil.copy(FIXTURES / "lm_weights.hdf5", weights)
    tokens = ["<S>", "</S>", "<UNK>", *WORDS[:-4], "."]                  # the last words of WORDS are <UNK>
    (root / "vocab.txt").write_text("\n".join(tokens) + "\n")
    rng = np.random.default_rng(0)
    with h5py.File(weights, "a") as handle:
        handle["softmax/W"] = rng.normal(0, 0.3, size=(len(tokens), 16)).astype(np.float32)
        handle["softmax/b"] = rng.normal(0, 0.3, size=len(tokens)).astype(np.float32)
    return root


def _bilm_args(root, data, *more):
    return ["probe=lens", "bilm=custom", f"bilm.options={FIXTURES / 'options.json'}",
            f"bilm.weights={root / 'lm_weights.hdf5'}", f"probe.data_dir={data}", f"paths.cache_dir={root / 'cache'}",
            "logger=disabled", "progress=false", "probe.bootstrap=200", *more]


def _bilm_encoder(root):
    from elmo_bench.encoders.bilm.encoder import load_bilm_encoder

    return load_bilm_encoder(FIXTURES / "options.json", root / "lm_weights.hdf5")


@needs_fixtures
def test_the_biLM_lens_is_the_shared_softmax_on_each_half_and_its_top_layer_is_the_LM_evaluation(lm_fixture):
    from elmo_bench.bilm.chars import batch_to_ids
    from elmo_bench.pretrain.perplexity import lm_log_likelihoods
    from elmo_bench.pretrain.vocab import Vocab
    from elmo_bench.probe.lens.readout import readout_for
    from elmo_bench.probe.lens.scoring import score

    encoder = _bilm_encoder(lm_fixture)
    readout = readout_for(encoder, torch.device("cpu"))
    sentence = ["the", "dog", "saw", "with", "."]                          # "with" is <UNK>
    streams = readout.streams([sentence], [0, 1, 2])
    with h5py.File(lm_fixture / "lm_weights.hdf5", "r") as handle:
        weight, bias = handle["softmax/W"][...].astype(np.float64), handle["softmax/b"][...].astype(np.float64)
    vocab = (lm_fixture / "vocab.txt").read_text().split()
    with torch.no_grad():
        layers = encoder.bilm(batch_to_ids([sentence]), keep_boundaries=True).layers[0].double().numpy()
    for layer, direction, position, gold in ((1, "forward", 2, "saw"), (2, "backward", 4, "with"), (0, "forward", 0,
                                                                                                    "the")):
        state = layers[layer, position, :16] if direction == "forward" else layers[layer, position + 1, 16:]
        logits = weight @ state + bias
        by_hand = logits - logits.max() - np.log(np.exp(logits - logits.max()).sum())
        lens = readout.logits(streams.hidden[(layer, direction)], layer).log_softmax(-1)[position].double().numpy()
        np.testing.assert_allclose(lens, by_hand, rtol=1e-5, atol=1e-5)
        index = vocab.index(gold) if gold in vocab else vocab.index("<UNK>")
        assert int(streams.gold[direction][position]) == index
    dev = [["the", "cat", "ran", "home", "."], ["a", "big", "tree", "."], sentence]
    scored, _ = score(readout, {"logit": None}, dev, [2], 2)
    fw, bw, count = lm_log_likelihoods(encoder.bilm, readout.weight, readout.bias, Vocab.load(lm_fixture / "vocab.txt"),
                                       dev)
    for direction, nats in (("forward", fw), ("backward", bw)):
        sums = scored[("logit", 2, direction)].sum(0)
        assert sums[-1] == count == sum(len(s) + 1 for s in dev)
        assert math.isclose(sums[0] * math.log(2), nats, rel_tol=1e-6)
        assert abs(sums[1]) < 1e-6 and sums[3] == count                   # the last layer against itself


@needs_fixtures
def test_an_untrained_tuned_lens_is_the_logit_lens_and_training_lowers_its_KL(lm_fixture):
    from types import SimpleNamespace

    from elmo_bench.probe.lens.readout import readout_for
    from elmo_bench.probe.lens.scoring import score
    from elmo_bench.probe.lens.tuned import Translators, train

    readout = readout_for(_bilm_encoder(lm_fixture), torch.device("cpu"))
    dev = _sentences(6, 5)
    untrained = Translators([(k, d) for k in (0, 1) for d in readout.directions], 16)
    scored, _ = score(readout, {"logit": None, "tuned": untrained}, dev, [0, 1, 2], 4)
    for key, sums in scored.items():
        if key[0] == "tuned":
            assert np.array_equal(sums, scored[("logit", *key[1:])])
    settings = SimpleNamespace(batch_size=8, lr=0.1, max_epochs=4)
    trained, history = train(readout, [0, 1, 2], _sentences(40, 6), settings, seed=0)
    assert len(history) == 4 and history[-1] < history[0]
    assert set(trained.maps) == {f"layer_{k}_{d}" for k in (0, 1) for d in ("forward", "backward")}  # none at top
    after, _ = score(readout, {"logit": None, "tuned": trained}, dev, [0, 1, 2], 4)
    for layer in (0, 1):
        for direction in readout.directions:
            tuned, logit = after[("tuned", layer, direction)].sum(0), after[("logit", layer, direction)].sum(0)
            assert tuned[1] < logit[1]                                      # KL(final ‖ lens), held-out
    assert np.array_equal(after[("tuned", 2, "forward")], after[("logit", 2, "forward")])


@needs_fixtures
def test_probe_lens_on_the_biLM_records_the_contracts_keys_and_skips_when_run_again(lm_fixture, tmp_path):
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe

    args = _bilm_args(lm_fixture, _ewt(tmp_path), "probe.max_epochs=2")
    saved = run_probe(job_run(args), tmp_path / "run")
    dev = saved["metrics"]["dev"]
    streams = {f"{p}{lens}/layer_{k}_{d}" for p in ("", "random/") for lens in ("logit", "tuned") for k in (0, 1, 2)
               for d in ("forward", "backward")}
    assert set(dev) == {f"{s}_{m}" for s in streams for m in MEASURES}
    assert saved["task"] == "lens_probe" and saved["main_metric"] == "tuned/layer_0_forward_bits"
    for stream in streams:
        row = {m: dev[f"{stream}_{m}"] for m in MEASURES}
        assert row["ppl"] == pytest.approx(2 ** row["bits"]) and row["bits_lo"] <= row["bits"] <= row["bits_hi"]
        assert row["kl"] >= -1e-9 and 0 <= row["top1"] <= 100 and row["agree_lo"] <= row["agree"] <= row["agree_hi"]
    for prefix in ("", "random/"):
        for d in ("forward", "backward"):
            assert dev[f"{prefix}tuned/layer_2_{d}_kl"] <= 1e-3 and dev[f"{prefix}tuned/layer_2_{d}_agree"] == 100
            assert dev[f"{prefix}tuned/layer_2_{d}_bits"] == dev[f"{prefix}logit/layer_2_{d}_bits"]
            for k in (0, 1):                                                  # held out: never worse beyond its CI
                assert dev[f"{prefix}tuned/layer_{k}_{d}_kl"] <= dev[f"{prefix}logit/layer_{k}_{d}_kl_hi"]
    again = run_probe(job_run(args), tmp_path / "run")
    assert again["metrics"] == saved["metrics"]
    logit_only = run_probe(job_run([*args, "probe.lens=logit", "probe.baseline=none", "probe.layers=[1]"]),
                           tmp_path / "logit")["metrics"]["dev"]
    assert set(logit_only) == {f"logit/layer_1_{d}_{m}" for d in ("forward", "backward") for m in MEASURES}
    assert logit_only["logit/layer_1_forward_bits"] == pytest.approx(dev["logit/layer_1_forward_bits"], rel=1e-6)


@needs_fixtures
def test_an_encoder_without_an_LM_head_is_one_line_and_writes_nothing(tmp_path):
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe
    from tests.hf_tiny import tiny_models

    data = _ewt(tmp_path)
    made = tmp_path / "made.hdf5"
    with h5py.File(made, "w") as out:                                    # an elmo-bench embed file: layers, no head
        out.create_dataset("0", data=np.ones((2, 3, 4), dtype=np.float32))
        out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())[0] = json.dumps({"a b c": "0"})
    common = [f"probe.data_dir={data}", f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled", "progress=false"]
    cases = ((["bilm=fixture"], "no softmax/W"),
             (["encoder=transformers", f"encoder.path={tiny_models()['bert']}"], "needs a causal LM with its head"),
             (["encoder=hdf5", f"encoder.path={made}"], "needs an encoder with an LM head"))
    for more, message in cases:
        with pytest.raises(ConfigError, match=message) as info:
            run_probe(job_run(["probe=lens", *common, *more]), tmp_path / "refused")
        assert "\n" not in str(info.value) and not (tmp_path / "refused").exists()
    with pytest.raises(ConfigError, match="probe.lens expected"):
        job_run(["probe=lens", *common, "probe.lens='logit,logit'"])


def _tiny_causal(directory):
    """A tiny LlamaForCausalLM (untied head) with a byte-level BPE tokenizer, saved as a downloaded model is."""
    from transformers import GPT2TokenizerFast, LlamaConfig, LlamaForCausalLM

    from tests.hf_tiny import MAX_LENGTH, _byte_level, _sample_lines

    tok = _byte_level(_sample_lines())
    work = directory / "_raw"
    work.mkdir(parents=True)
    tok.model.save(str(work))
    GPT2TokenizerFast(vocab=str(work / "vocab.json"), merges=str(work / "merges.txt"), unk_token="<unk>",
                      bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                      model_max_length=MAX_LENGTH).save_pretrained(directory)
    torch.manual_seed(1)                      # not the twin's seed 0: a random twin must differ from the model
    config = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
                         num_key_value_heads=1, intermediate_size=64, max_position_embeddings=MAX_LENGTH,
                         tie_word_embeddings=False)
    LlamaForCausalLM(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def causal_lm(tmp_path_factory):
    return _tiny_causal(tmp_path_factory.mktemp("lens_llama") / "llama")


def test_the_logit_lens_of_a_causal_LM_at_its_last_layer_is_the_models_own_log_probs(causal_lm):
    from transformers import LlamaForCausalLM

    from elmo_bench.encoders.build import build_encoder
    from elmo_bench.probe.lens.readout import readout_for

    encoder = build_encoder({"kind": "transformers", "path": str(causal_lm)})
    readout = readout_for(encoder, torch.device("cpu"))
    model = LlamaForCausalLM.from_pretrained(causal_lm).eval()
    batch = [["The", "quick", "brown", "fox", "jumps"], ["Paris", "is", "the", "capital"]]
    streams = readout.streams(batch, [0, 1, 3])
    ids = readout.ids(batch)
    lens = readout.logits(streams.hidden[(3, "forward")], 3).log_softmax(-1)
    start = 0
    for row, tokens in enumerate(ids):
        with torch.no_grad():
            own = model(torch.tensor([tokens])).logits[0, :-1].log_softmax(-1)
        n = len(tokens) - 1
        assert torch.allclose(lens[start: start + n], own, atol=1e-5, rtol=0)
        assert torch.equal(streams.gold["forward"][start: start + n], torch.tensor(tokens[1:]))
        start += n
    with torch.no_grad():                                                  # one sentence, no padding: bit for bit
        alone = readout.logits(readout.streams(batch[:1], [3]).hidden[(3, "forward")], 3)
        assert torch.equal(alone, model(torch.tensor([ids[0]])).logits[0, :-1])
        below = readout.logits(streams.hidden[(1, "forward")], 1)
        normed = model.lm_head(model.model.norm(model(torch.tensor([ids[0]]), output_hidden_states=True)
                                                .hidden_states[1][0, :-1]))
        assert torch.allclose(below[: len(ids[0]) - 1], normed, atol=1e-5)


def test_probe_lens_on_a_causal_LM_honours_encoder_layers_and_scores_forward_only(causal_lm, tmp_path):
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe

    args = ["probe=lens", "encoder=transformers", f"encoder.path={causal_lm}", "encoder.layers=[0,2]",
            f"probe.data_dir={_ewt(tmp_path)}", f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled",
            "progress=false", "probe.bootstrap=100", "probe.max_epochs=1", "probe.baseline=none"]
    saved = run_probe(job_run(args), tmp_path / "run")
    dev = saved["metrics"]["dev"]
    assert set(dev) == {f"{lens}/layer_{k}_forward_{m}" for lens in ("logit", "tuned") for k in (0, 2)
                        for m in MEASURES}
    assert saved["printed"]["directions"] == ["forward"] and saved["printed"]["layers"] == [0, 2]
    assert all(dev[f"{lens}/layer_{k}_forward_kl"] > 0 for lens in ("logit", "tuned") for k in (0, 2))
    twin = run_probe(job_run([*args[:-1], "probe.lens=logit", "probe.baseline=random"]), tmp_path / "twin")
    twin_dev = twin["metrics"]["dev"]
    assert {key.partition("/")[0] for key in twin_dev} == {"logit", "random"}
    assert twin_dev["logit/layer_2_forward_bits"] == pytest.approx(dev["logit/layer_2_forward_bits"], rel=1e-6)
    assert twin_dev["random/logit/layer_2_forward_bits"] != twin_dev["logit/layer_2_forward_bits"]


def test_plan_prices_the_biLM_passes_and_its_softmax_on_every_layer(capsys):
    from elmo_bench.commands.main import main
    from elmo_bench.probe.probe_cost import UD_EWT_SIZES

    def planned(*args: str) -> dict:
        assert main(["plan", "probe=lens", "probe.data_dir=/nonexistent/ud", *args, "--format", "json"]) == 0
        return json.loads(capsys.readouterr().out)["runs"][0]

    dev, train = UD_EWT_SIZES["dev"], UD_EWT_SIZES["train"]
    logit = planned("probe.lens=logit", "probe.baseline=none")
    assert logit["sizes"] == "documented" and logit["cache_bytes"] == 0
    # 3 layers + the last again, both directions; the shared softmax 2 P V, its bias and the row's passes
    assert logit["train_flops"] == 2 * 4 * (2 * 128 + 11) * 20000 * (dev.tokens + dev.sentences)
    both = planned("probe.max_epochs=2", "probe.baseline=none")
    share = 2000 / train.sentences
    predictions = round(train.tokens * share) + 2000
    assert both["train_flops"] == 2 * 4 * (2 * 128 + 11) * 20000 * (2 * (dev.tokens + dev.sentences)
                                                                      + 3 * 2 * predictions)
    twin = planned("probe.max_epochs=2")
    assert twin["train_flops"] == 2 * both["train_flops"] and twin["encoder_flops"] == 2 * both["encoder_flops"]


@needs_data
def test_on_the_shipped_biLM_the_top_layer_is_the_LM_evaluations_perplexity(tmp_path):
    """The logit lens at the shipped biLM's top layer gives the forward and backward perplexities that
    elmo_bench.pretrain.perplexity computes on the same dev sentences (1e-6 relative); the tuned lens, held out,
    is never worse than the logit lens beyond its interval."""
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe
    from elmo_bench.pretrain.perplexity import evaluate, load_lm
    from elmo_bench.probe.lib.ud_data import read_tagged
    from tests.ud_slice import ewt_slice

    data = ewt_slice(tmp_path, {"train": 24, "dev": 12, "test": 5})
    args = ["probe=lens", f"probe.data_dir={data}", f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled",
            "progress=false", "probe.bootstrap=200", "probe.max_epochs=1", "probe.baseline=none"]
    dev = run_probe(job_run(args), tmp_path / "run")["metrics"]["dev"]
    shipped = REPO / "elmo_bench" / "resources" / "bilm"
    bilm, weight, bias, vocab, counts = load_lm(shipped / "options.json", shipped / "weights.hdf5",
                                                shipped / "vocab.txt")
    sentences = [ex["tokens"] for ex in read_tagged(data, "upos", None).splits["dev"]]
    evaluated = evaluate(bilm, weight, bias, vocab, counts, sentences)
    for direction in ("forward", "backward"):
        assert dev[f"logit/layer_2_{direction}_ppl"] == pytest.approx(evaluated[direction], rel=1e-6)
        for k in (0, 1):
            assert dev[f"tuned/layer_{k}_{direction}_bits"] <= dev[f"logit/layer_{k}_{direction}_bits_hi"]
            assert dev[f"tuned/layer_{k}_{direction}_kl"] <= dev[f"logit/layer_{k}_{direction}_kl_hi"]
