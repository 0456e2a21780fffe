"""Issue 47 item 3: a LEACE eraser applied inside the encoder's forward pass (encoder.erase.*): off leaves every layer
and the identity as they were; on at layer k leaves the layers below k bit-identical and changes layer k and above;
the random controls have exactly the fitted rank; a bad setting is one line."""
from __future__ import annotations

import pytest
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.erase_settings import check_erase_files, erase_spec
from elmo_bench.encoders.erasing import Affine, apply_erase, orth_control, random_control, whitening
from tests.conftest import FIXTURES, needs_data, needs_fixtures
from tests.ud_slice import ewt_slice

SENTENCES = [["The", "cat", "sat", "on", "the", "mat", "."], ["Dogs", "bark", "."], ["I", "saw", "it", "today"]]


def _fitted(seed: int = 0, n: int = 400, d: int = 6, classes: int = 4) -> tuple[Affine, torch.Tensor]:
    """A LEACE eraser (concept-erasure) of 4 classes from correlated 6-dim data, and the data's covariance."""
    from concept_erasure import LeaceFitter

    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    x = torch.randn(n, d, generator=g, dtype=torch.float64) @ torch.randn(d, d, generator=g, dtype=torch.float64)
    x[:, :classes] += 2.0 * torch.nn.functional.one_hot(y, classes)
    fitter = LeaceFitter(d, classes, method="leace", dtype=torch.float64, svd_tol=1e-8, constrain_cov_trace=False)
    fitter.update(x, torch.nn.functional.one_hot(y, classes).double())
    e = fitter.eraser
    return Affine(e.proj_left, e.proj_right, e.bias), torch.cov(x.T)


def test_the_controls_have_exactly_the_fitted_rank_and_are_projections():
    fitted, sigma = _fitted()
    assert fitted.rank() == 3
    for seed in (0, 1, 2):
        for control in (random_control(fitted, sigma, seed), orth_control(6, 3, seed)):
            change = control.left @ control.right
            assert control.rank() == 3 and torch.allclose(change @ change, change, atol=1e-10)   # idempotent
            assert 0.0 < control.variance_share(sigma) < 1.0
    a, b = random_control(fitted, sigma, 0), random_control(fitted, sigma, 1)
    assert not torch.allclose(a.left @ a.right, b.left @ b.right)                       # the seed draws the frame
    assert torch.equal(a.bias, fitted.bias)                                              # the fitted mean
    whiten, unwhiten = whitening(sigma)
    assert torch.allclose(whiten @ sigma @ whiten, torch.eye(6, dtype=torch.float64), atol=1e-8)
    assert torch.allclose(unwhiten @ whiten, torch.eye(6, dtype=torch.float64), atol=1e-8)
    # the random control is LEACE's form with an orthonormal frame U in whitened space: W (L R) W⁺ = U Uᵀ
    frame = whiten @ a.left
    assert torch.allclose(frame.T @ frame, torch.eye(3, dtype=torch.float64), atol=1e-8)


def test_erase_settings_off_and_bad_input_are_one_line(tmp_path):
    assert erase_spec({"kind": "bilm"}) is None
    assert erase_spec({"kind": "bilm", "erase": {"concept": None, "layer": None, "control": "none", "seed": 0,
                                                 "path": None}}) is None
    on = {"concept": "upos", "layer": 1, "control": "random", "seed": 2, "path": "x"}
    assert erase_spec({"kind": "bilm", "erase": on}) == on
    for bad, message in (({**on, "control": "rand"}, "control expected one of none, random, orth"),
                         ({**on, "concept": "ner"}, "concept expected one of upos"),
                         ({**on, "layer": None}, "needs encoder.erase.layer"),
                         ({**on, "layer": -1}, "encoder.erase.layer"),
                         ({**on, "path": None}, "needs encoder.erase.path"),
                         ({**on, "colour": 1}, "erase.colour is not a key")):
        with pytest.raises(ConfigError, match=message):
            erase_spec({"kind": "bilm", "erase": bad})
    with pytest.raises(ConfigError, match="applies to encoder=bilm|transformers"):
        erase_spec({"kind": "hdf5", "erase": on})
    # at the door (before any run directory): the layer against the biLM's options, the eraser file's presence
    options = str(FIXTURES / "options.json")
    with pytest.raises(ConfigError, match=r"encoder.erase.layer=3 is outside the encoder \(encoder=bilm erases "
                                          r"layers 0..2\)"):
        check_erase_files({"kind": "bilm", "erase": {**on, "layer": 3}}, options)
    with pytest.raises(ConfigError, match="no eraser file layer_1.pt there"):
        check_erase_files({"kind": "bilm", "erase": {**on, "path": str(tmp_path)}}, options)
    check_erase_files({"kind": "bilm"}, options)                                       # off: nothing checked


@pytest.fixture(scope="module")
def erasers(tmp_path_factory):
    """probe=erasure on the test biLM (the first 120/50/100 UD EWT sentences, every layer): its run directory, holding
    erasers/layer_<k>.pt with the per-stream erasers."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import run_probe

    root = tmp_path_factory.mktemp("erasure")
    data = ewt_slice(root, {"train": 120, "dev": 50, "test": 100})       # EWT's first 120 training sentences
    run_probe(job_run(["probe=erasure", "bilm=fixture", f"paths.cache_dir={root / 'cache'}", "logger=disabled",
                       "progress=false", f"probe.data_dir={data}"]), root / "run")
    return root / "run"


def _bilm():
    from elmo_bench.encoders.bilm.encoder import load_bilm_encoder

    return load_bilm_encoder(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5")


def _erased(run, layer: int, control: str = "none", seed: int = 0):
    spec = {"kind": "bilm", "erase": {"concept": "upos", "layer": layer, "control": control, "seed": seed,
                                      "path": str(run)}}
    return apply_erase(_bilm(), erase_spec(spec))


@needs_fixtures
@needs_data
def test_erasing_layer_k_inside_the_bilm_keeps_the_layers_below_and_recomputes_the_rest(erasers):
    plain = _bilm()
    before, mask = plain.layers(SENTENCES)
    off = apply_erase(_bilm(), erase_spec({"kind": "bilm", "erase": {"concept": None}}))
    assert off.identity() == plain.identity() == {"kind": "bilm", "hash": plain.hash}
    assert off.cache_id() == plain.hash and torch.equal(off.layers(SENTENCES)[0], before)
    ids = set()
    for layer in (0, 1, 2):
        for control in ("none", "random", "orth"):
            encoder = _erased(erasers, layer, control)
            after, mask_after = encoder.layers(SENTENCES)
            assert torch.equal(mask, mask_after) and torch.equal(after[:, :layer], before[:, :layer])
            for k in range(layer, 3):
                assert not torch.allclose(after[:, k][mask], before[:, k][mask], atol=1e-4)
            assert not after.transpose(1, 2)[~mask].any()                           # padding stays zero
            assert encoder.identity()["erase"]["layer"] == layer and encoder.cache_id() != plain.hash
            ids.add(encoder.cache_id())
            streams = encoder.bilm.lstm.eraser.streams                          # per stream: 16 = 32 / 2
            assert [s.dim for s in streams] == ([16] if layer == 0 else [16, 16])
            assert encoder.info["erase"]["rank"] == [s.rank() for s in streams]
    assert len(ids) == 9


def _cross_covariance(encoder, sentences, tags, classes, layer: int) -> float:
    """The largest |Cov(forward half of ``layer``, one-hot tag)| over the training words, as the encoder computes
    them live (LEACE's guarantee is that it is 0 for the eraser's own training data)."""
    out, mask = encoder.layers(sentences)
    x = out[:, layer][mask][:, : out.shape[-1] // 2].double()
    z = torch.nn.functional.one_hot(torch.tensor([classes.index(t) for row in tags for t in row]), len(classes))
    return float(((x - x.mean(0)).T @ (z.double() - z.double().mean(0)) / len(x)).abs().max())


@needs_fixtures
@needs_data
def test_the_in_model_eraser_removes_the_concept_from_the_stream_it_erases(erasers):
    """On the eraser's training words, the erased forward stream of layer 1 has (nearly) no linear covariance with
    the UPOS one-hot: LEACE's guarantee, up to the fp16 cache it was fitted from; the random control of the same rank
    keeps more of it."""
    from elmo_bench.probe.lib.ud_data import read_tagged
    from elmo_bench.probe.settings import UD_EWT
    from tests.conftest import DATA

    saved = torch.load(erasers / "erasers" / "layer_1.pt", weights_only=False)
    classes = saved["identity"]["classes"]
    assert [int(torch.linalg.matrix_rank(s["proj_left"] @ s["proj_right"])) for s in saved["streams"]] == \
        [len(classes) - 1] * 2
    train = read_tagged(DATA / UD_EWT, "upos", 120).splits["train"]
    sentences, tags = [ex["tokens"] for ex in train], [ex["tags"] for ex in train]
    plain = _cross_covariance(_bilm(), sentences, tags, classes, 1)
    erased = _erased(erasers, 1)
    left = _cross_covariance(erased, sentences, tags, classes, 1)
    assert left < 0.01 * plain
    # the fixture's streams are 16 wide and UPOS's rank is nearly that: a random frame of the same rank removes
    # most of the covariance too, but not the concept's own directions
    assert _cross_covariance(_erased(erasers, 1, "random"), sentences, tags, classes, 1) > 10 * left
    shares = erased.info["erase"]["variance_share"]
    assert shares["fitted"] == shares["applied"] and all(0 < s < 1 for s in shares["fitted"])


@needs_fixtures
@needs_data
def test_a_mismatched_eraser_or_layer_is_one_line(erasers, tmp_path):
    from elmo_bench.encoders.random_init import randomise

    with pytest.raises(ConfigError, match="encoder.erase.layer=3 is outside the encoder"):
        _erased(erasers, 3)
    spec = erase_spec({"kind": "bilm", "erase": {"concept": "upos", "layer": 2, "path": str(
        erasers / "erasers" / "layer_1.pt")}})
    with pytest.raises(ConfigError, match="fitted for layer 1"):
        apply_erase(_bilm(), spec)
    with pytest.raises(ConfigError, match="fitted for concept 'upos'"):
        apply_erase(_bilm(), {**spec, "layer": 1, "concept": "xpos"})
    with pytest.raises(ConfigError, match="fitted for encoder"):
        apply_erase(randomise(_bilm(), "all", 0), {**spec, "layer": 1})
    saved = torch.load(erasers / "erasers" / "layer_1.pt", weights_only=False)
    saved["streams"] = [{k: v[:4, :4] if k in ("sigma",) else v for k, v in s.items()} for s in saved["streams"]]
    for stream in saved["streams"]:
        stream["proj_left"] = stream["proj_left"][:4]
    torch.save(saved, tmp_path / "narrow.pt")
    with pytest.raises(ConfigError, match=r"eraser width \[4, 4\], the encoder's layer 1 has \[16, 16\]"):
        apply_erase(_bilm(), {**spec, "layer": 1, "path": str(tmp_path / "narrow.pt")})
    with pytest.raises(ConfigError, match="no eraser file"):
        apply_erase(_bilm(), {**spec, "path": str(tmp_path)})


@needs_fixtures
@needs_data
def test_a_task_run_refused_for_its_eraser_leaves_no_run_directory(erasers, tmp_path):
    """The refusal comes after the run took its directory's lock (the encoder is built there): exit 2, one line, and
    the directory the run made is gone again, lock file included (it used to stay with ``.elmo_bench.lock``)."""
    from tests.conftest import REPO
    from tests.warm_python import run_python

    results = tmp_path / "results"
    done = run_python(["run.py", "task=edge_pos", "embedder=elmo", f"paths.results_dir={results}", "logger=disabled",
                       f"paths.cache_dir={tmp_path / 'cache'}", "encoder.erase.concept=upos",
                       "encoder.erase.layer=1", f"encoder.erase.path={erasers}"], cwd=REPO, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: config: encoder.erase.path") and "fitted for encoder" in lines[-1], lines
    leftovers = [p for p in results.rglob("*") if p.is_file()] if results.exists() else []
    assert leftovers == [], leftovers
    assert [p for p in results.rglob("*") if "encoder.erase" in p.name] == []      # the run's own directory


@pytest.fixture(scope="module")
def bert_erasers(tmp_path_factory):
    """probe=erasure on a tiny random BERT (tests/hf_tiny.py) over the first 60/30/60 UD EWT sentences: its run
    directory."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import run_probe
    from tests.hf_tiny import tiny_models

    root = tmp_path_factory.mktemp("bert_erasure")
    path = tiny_models()["bert"]
    data = ewt_slice(root, {"train": 60, "dev": 30, "test": 60})
    run_probe(job_run(["probe=erasure", "encoder=transformers", f"encoder.path={path}", "logger=disabled",
                       f"paths.cache_dir={root / 'cache'}", "progress=false", f"probe.data_dir={data}"]),
              root / "run")
    return path, root / "run"


@needs_data
def test_a_hook_on_block_k_erases_a_transformer_inside_its_forward_pass(bert_erasers):
    from elmo_bench.encoders.build import build_encoder
    from elmo_bench.encoders.protocol import cache_id

    path, run = bert_erasers
    plain = build_encoder({"kind": "transformers", "path": str(path)})
    before, mask = plain.layers(SENTENCES)
    last = plain.num_layers - 1
    for layer in range(last):
        encoder = build_encoder({"kind": "transformers", "path": str(path)})
        spec = erase_spec({"kind": "transformers", "erase": {"concept": "upos", "layer": layer, "path": str(run)}})
        erased = apply_erase(encoder, spec)
        after, _ = erased.layers(SENTENCES)
        assert torch.equal(after[:, :layer], before[:, :layer])
        for k in range(layer, last + 1):
            assert not torch.allclose(after[:, k][mask], before[:, k][mask], atol=1e-4)
        assert erased.identity() == {**plain.identity(), "erase": erased.erased}
        assert cache_id(erased) != cache_id(plain)
    with pytest.raises(ConfigError, match=f"encoder.erase.layer={last} is outside the encoder"):
        apply_erase(build_encoder({"kind": "transformers", "path": str(path)}), {**spec, "layer": last})
    with pytest.raises(ConfigError, match="fitted for encoder"):                 # the BERT's eraser on the biLM
        apply_erase(_bilm(), {**spec, "layer": 0, "path": str(run / "erasers" / "layer_0.pt")})


@pytest.fixture(scope="module")
def shipped_erasers(tmp_path_factory):
    """probe=erasure on the shipped biLM (it has its softmax) over the first 80/40/100 UD EWT sentences,
    layers 1 and 2."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import run_probe

    root = tmp_path_factory.mktemp("shipped_erasure")
    data = ewt_slice(root, {"train": 80, "dev": 40, "test": 100})
    common = [f"paths.cache_dir={root / 'cache'}", "logger=disabled", "progress=false", f"probe.data_dir={data}"]
    run_probe(job_run(["probe=erasure", "probe.layers=[1,2]", *common]),
              root / "run")
    return root, common


@needs_data
def test_amnesic_lm_scores_the_biLM_with_a_concept_erased_inside(shipped_erasers):
    """The contract's keys; none has KL 0; erasing raises perplexity; the recomputation from layer k up gives the
    numbers of the full pass; every refusal is one line and writes nothing."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import run_probe

    root, common = shipped_erasers
    args = ["probe=amnesic_lm", f"probe.erasers={root / 'run'}", "probe.max_eval_sentences=12", "probe.seeds=3",
            "probe.bootstrap=200", "probe.layers=[1,2]", *common]
    dev = run_probe(job_run(args), root / "lm")["metrics"]["dev"]
    keys = {f"layer_{k}_{m}" for k in (1, 2) for m in ("ppl_none", "ppl_erased", "ppl_random", "kl_erased",
                                                        "kl_random", "p", "top1_none", "top1_erased",
                                                        "top1_random", "share_erased", "share_random")}
    assert keys == set(dev)
    for k in (1, 2):
        assert dev[f"layer_{k}_ppl_none"] == dev["layer_1_ppl_none"] and dev[f"layer_{k}_kl_erased"] > 0
        assert dev[f"layer_{k}_ppl_erased"] > dev[f"layer_{k}_ppl_none"] and 0 < dev[f"layer_{k}_p"] <= 1
        assert 0 < dev[f"layer_{k}_share_erased"] < 1 and 0 < dev[f"layer_{k}_share_random"] < 1
    for bad, message in ((["bilm=fixture"], "no softmax/W"), (["bilm=random"], "needs a trained biLM"),
                         (["encoder.erase.concept=upos", "encoder.erase.layer=1", f"encoder.erase.path={root / 'run'}"],
                          "leave encoder.erase off")):
        with pytest.raises(ConfigError, match=message):
            run_probe(job_run([*args, *bad]), root / "refused")
        assert not (root / "refused").exists()


@needs_data
def test_the_memo_recomputes_only_from_the_erased_layer_and_changes_nothing(shipped_erasers):
    """Erasing layer 1 of the shipped biLM with the memo of an un-erased pass: LSTM layer 0 is taken from the memo
    (poisoning it shows), layer 1 is recomputed (poisoning its entry changes nothing), and the result is the full
    pass's bit for bit."""
    import elmo_bench
    from elmo_bench.bilm.chars import batch_to_ids
    from elmo_bench.bilm.model import add_sentence_boundaries
    from elmo_bench.encoders.bilm.encoder import load_bilm_encoder
    from elmo_bench.encoders.erasing import load_in_model
    from elmo_bench.encoders.protocol import cache_id

    root, _ = shipped_erasers
    resources = FIXTURES.__class__(elmo_bench.__file__).parent / "resources" / "bilm"
    encoder = load_bilm_encoder(resources / "options.json", resources / "weights.hdf5")
    spec = {"concept": "upos", "layer": 1, "control": "none", "seed": 0, "path": str(root / "run")}
    eraser = load_in_model(spec, cache_id(encoder), [128, 128])
    chars, lengths = add_sentence_boundaries(batch_to_ids(SENTENCES))
    lstm = encoder.bilm.lstm
    with torch.no_grad():
        tokens = encoder.bilm.token_encoder(chars)
        memo: dict = {}
        plain = lstm(tokens, lengths, memo=memo)[0]
        lstm.eraser = eraser
        full = lstm(tokens, lengths)[0]
        memo[1] = (memo[1][0] * 0, memo[1][1])        # above the erased layer: never read
        reused = lstm(tokens, lengths, memo=memo)[0]
        memo[0] = (memo[0][0] * 0, memo[0][1])        # below it: read
        poisoned = lstm(tokens, lengths, memo=memo)[0]
    assert all(torch.equal(a, b) for a, b in zip(reused, full)) and not torch.equal(full[1], plain[1])
    assert not torch.equal(poisoned[1], full[1])
