"""The papers' Adam regimen for many problems at once (elmo_bench.probe.lib.stacked): every problem's probe, history,
epochs and kept epoch are those of its one-problem fit (regimen.train_tokens), on a CPU bit for bit, whatever the
other problems of the stack do; pos_controls' rows and MDL's blocks trained together give the per-layer numbers."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from elmo_bench.probe.lib.classifiers import ProbeSpec
from elmo_bench.probe.lib.regimen import Regimen, Tokens, train_tokens
from elmo_bench.probe.lib.stacked import train_probes
from elmo_bench.probe.lib.ud_data import SPLITS
from tests.conftest import needs_data
from tests.ud_slice import ewt_slice


def _problems(seed: int = 0, views: int = 3, dim: int = 12, classes: int = 5):
    """(trains, devs): ``views`` feature views of one set of sentences, each with the real and a random labelling."""
    g = torch.Generator().manual_seed(seed)

    def split(n: int):
        lengths = torch.randint(2, 20, (n,), generator=g).tolist()
        base = torch.randn(sum(lengths), dim, generator=g)
        gold = (base[:, :classes].argmax(1) + (torch.rand(len(base), generator=g) < 0.2)) % classes
        xs = [base + (v + 0.5) * torch.randn(base.shape, generator=g) for v in range(views)]
        noise = torch.randint(-1, classes, (len(base),), generator=g)
        real = [Tokens.flat(x, gold, lengths) for x in xs]
        return real + [t.relabelled(noise) for t in real]

    return split(240), split(80)


def _same(a, b) -> bool:
    return (a.epochs, a.best_epoch, a.history, a.dev_loss, a.dev_accuracy) == \
        (b.epochs, b.best_epoch, b.history, b.dev_loss, b.dev_accuracy) and \
        all(torch.equal(p, q) for p, q in zip(a.probe.state_dict().values(), b.probe.state_dict().values()))


@pytest.mark.parametrize("kind", ["linear", "mlp1", "mlp2"])
def test_each_stacked_problem_is_its_one_problem_fit(kind):
    """Parameters, per-epoch losses and learning rates, epochs and the kept epoch equal train_tokens' problem by
    problem; the problems stop at different epochs (a stopped one leaves the stack, the others go on)."""
    trains, devs = _problems()
    spec, regimen = ProbeSpec(kind, hidden=24, rank=16), Regimen(lr=0.01, max_epochs=14, patience=1, min_improvement=0.05, seed=3)
    together = train_probes(spec, trains, devs, 5, regimen)
    alone = [train_tokens(spec, t, d, 5, regimen) for t, d in zip(trains, devs)]
    assert all(_same(a, b) for a, b in zip(together, alone))
    assert len({t.epochs for t in together}) > 1
    assert any(h["lr"] < regimen.lr for t in together for h in t.history)    # the plateau halved some rates


def test_dropout_and_other_widths_train_one_by_one():
    """A probe with dropout (random masks per problem) or problems of two widths: each trained alone, as before."""
    trains, devs = _problems(views=2)
    spec, regimen = ProbeSpec("mlp1", hidden=8, dropout=0.3), Regimen(max_epochs=3, seed=1)
    assert all(_same(a, b) for a, b in zip(train_probes(spec, trains, devs, 5, regimen),
                                           [train_tokens(spec, t, d, 5, regimen) for t, d in zip(trains, devs)]))
    wide, wide_dev = _problems(views=1, dim=7)
    mixed, mixed_dev = [trains[0], wide[0]], [devs[0], wide_dev[0]]
    spec = ProbeSpec("mlp1", hidden=8)
    assert all(_same(a, b) for a, b in zip(train_probes(spec, mixed, mixed_dev, 5, regimen),
                                           [train_tokens(spec, t, d, 5, regimen) for t, d in zip(mixed, mixed_dev)]))


def _real_layers(tmp_path, counts: dict[str, int]):
    """The shipped biLM's layers (float32) and the tagged splits of a real UD EWT slice."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.encoders.cache import ActivationCache
    from elmo_bench.engine.probe_run import load_probe_encoder
    from elmo_bench.probe.lib.features import layer_features
    from elmo_bench.probe.lib.ud_data import read_tagged

    data = ewt_slice(tmp_path, counts)
    run = job_run(["probe=pos_controls", f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled",
                   "progress=false", f"probe.data_dir={data}", f"probe.max_train_sentences={counts['train']}"])
    splits = read_tagged(data, run.probe.settings.tags, counts["train"], None).splits
    cache = ActivationCache(tmp_path / "cache", load_probe_encoder(run)[0], progress=False)
    layers = {s: layer_features(cache.layers([ex["tokens"] for ex in splits[s]], name=f"pos/{s}"), len(splits[s]))
              for s in SPLITS}
    return layers, splits


@needs_data
def test_real_ewt_pos_controls_and_mdl_equal_their_per_layer_fits(tmp_path):
    """Real UD EWT on the shipped biLM: pos_controls' linear and MLP-1 probes on every layer, real and control
    tags, and MDL's block probes of every layer and labelling, trained together, give the per-layer numbers."""
    from elmo_bench.probe.lib.control import control_tags
    from elmo_bench.probe.lib.features import tag_ids
    from elmo_bench.probe.mdl import online_code as mdl
    from elmo_bench.probe.mdl.config import MdlSettings
    from elmo_bench.probe.mdl.probe import FACTORIES, MANY
    from elmo_bench.probe.pos.fits import ProbeSettings, run_probes

    layers, splits = _real_layers(tmp_path, {"train": 150, "dev": 60, "test": 60})
    labels = sorted({t for ex in splits["train"] for t in ex["tags"]})
    rows = {f"layer_{k}": {s: layers[s][:, k] for s in SPLITS} for k in range(layers["train"].shape[1])}
    spec = {p: ProbeSpec(p, hidden=32, rank=48) for p in ("linear", "mlp1")}
    settings = ProbeSettings(["linear", "mlp1"], [0, 1], True, spec, Regimen(max_epochs=4), [1e-3], 10, 1e-4)
    stacked, alone = (run_probes(rows, splits, labels, settings, torch.device("cpu"), stacked=s) for s in (True, False))
    for fits in ("real", "control"):
        a, b = getattr(stacked, fits), getattr(alone, fits)
        assert list(a) == list(b)
        for key in a:
            assert [(f.dev, f.test, f.extra) for f in a[key]] == [(f.dev, f.test, f.extra) for f in b[key]]
            assert all(np.array_equal(f.correct, g.correct) for f, g in zip(a[key], b[key]))
    targets = {"task": {s: tag_ids(splits[s], labels) for s in SPLITS}, "control": control_tags(splits, labels, 0)}
    device = torch.device("cpu")
    k = len(labels)
    data = [mdl.TokenData(np.ascontiguousarray(layers["train"][:, at]), np.asarray(targets[w]["train"]),
                          np.array([len(ex["tokens"]) for ex in splits["train"]])) for w in targets for at in range(3)]
    dev = [mdl.TokenData(np.ascontiguousarray(layers["dev"][:, at]), np.asarray(targets[w]["dev"]),
                         np.array([len(ex["tokens"]) for ex in splits["dev"]])) for w in targets for at in range(3)]
    fractions = (0.1, 0.3, 1.0)
    for kind in ("linear", "mlp1"):
        probe_settings = MdlSettings(probe=kind, hidden=16, max_epochs=3)
        together = mdl.online_codelengths(data, dev, k, MANY[kind](k, probe_settings, device), 2, fractions)
        one = [mdl.online_codelength(t, d, k, FACTORIES[kind](k, probe_settings, device), 2, fractions)
               for t, d in zip(data, dev)]
        assert [c.blocks for c in together] == [c.blocks for c in one]
        assert [c.online_bits for c in together] == [c.online_bits for c in one]


@pytest.mark.parametrize("kind", ["linear", "mlp1"])
def test_mdl_online_codes_of_every_layer_and_labelling_together_equal_one_by_one(kind):
    """probe mdl's and mdl_mlp's ``online_codes`` with the stacked blocks (MANY) against the per-layer loop (many=None): the
    same summaries and test accuracies, tags and control labels, on 1,000 sentences (the schedule's smallest)."""
    from elmo_bench.probe.mdl.config import MdlSettings
    from elmo_bench.probe.mdl.probe import FACTORIES, MANY, online_codes

    rng = np.random.default_rng(0)
    splits = {s: [{"tokens": ["w"] * int(n)} for n in rng.integers(1, 4, size)]
              for s, size in (("train", 1000), ("dev", 40), ("test", 40))}
    features = {}
    targets = {"task": {}, "control": {}}
    for s, examples in splits.items():
        tokens = sum(len(ex["tokens"]) for ex in examples)
        features[s] = rng.normal(size=(tokens, 2, 6)).astype(np.float32)
        targets["task"][s] = torch.from_numpy((features[s][:, 1, :3].argmax(1)).astype(np.int64))
        targets["control"][s] = torch.from_numpy(rng.integers(0, 3, tokens))
    settings, device = MdlSettings(probe=kind, hidden=8, max_epochs=6), torch.device("cpu")
    layers = [(0, 0), (1, 1)]
    trainer = FACTORIES[kind](3, settings, device)
    together = online_codes(features, splits, targets, layers, trainer, 0, 3, MANY[kind](3, settings, device))
    assert together == online_codes(features, splits, targets, layers, trainer, 0, 3)
    assert set(together) == {"task", "control"} and set(together["task"]["train"]) == {"layer_0", "layer_1"}


def test_tokens_rows_are_each_sentences_rows_in_order():
    """Tokens.rows (one arange and a shift per sentence) gives the rows the per-sentence loop gave."""
    g = torch.Generator().manual_seed(0)
    tokens = Tokens([torch.zeros(int(n), 2) for n in torch.randint(1, 30, (300,), generator=g)], None)
    for _ in range(10):
        sentences = torch.randperm(300, generator=g)[:20]
        loop = torch.cat([torch.arange(int(tokens.offsets[s]), int(tokens.offsets[s + 1])) for s in sentences])
        assert torch.equal(tokens.rows(sentences), loop)


@needs_data
def test_real_ewt_conditional_mlp_fits_together_equal_one_by_one(tmp_path):
    """probe conditional's MLP-1 family: the layers' fits of one baseline trained together (fit_mlp1_many) give each
    layer's fit_mlp1 bits and accuracy exactly, with and without the word lookup (which trains one by one)."""
    from elmo_bench.probe.conditional.mlp import fit_mlp1, fit_mlp1_many
    from elmo_bench.probe.lib import bits as cp
    from elmo_bench.probe.lib.labelled import labelled

    layers, splits = _real_layers(tmp_path, {"train": 120, "dev": 50, "test": 50})
    data = labelled(splits)
    vocabulary = cp.Vocabulary.of(data.words["train"])
    ids = {s: vocabulary.ids(data.words[s]) for s in data.words}
    spec, regimen = ProbeSpec("mlp1", hidden=24), Regimen(max_epochs=4, seed=0)
    denses = [{s: layers[s][:, k] for s in SPLITS} for k in range(3)]
    for words in (None, ids):
        args = (data.y, data.lengths, len(data.classes), len(vocabulary), spec, regimen)
        together = fit_mlp1_many(denses, words, *args)
        for dense, fit in zip(denses, together):
            alone = fit_mlp1(dense, words, *args)
            assert np.array_equal(fit.bits, alone.bits)
            assert (fit.accuracy, fit.epochs, fit.best_epoch) == (alone.accuracy, alone.epochs, alone.best_epoch)
