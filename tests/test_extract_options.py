"""Issue 56 item 2: ``elmo-bench extract`` takes exactly ``embed``'s encoder options through their one definition
(elmo_bench.encoders.cli_options.add_extraction_arguments); ``--layers`` and ``--dtype`` store only those layers,
computed in that dtype, under the key a run with the same ``encoder.*`` reads; ``--batch-size`` caps a batch; a
second extract says it found the entry done; the refusals are one line, exit 2, nothing written."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from elmo_bench.commands.extract import build_parser
from elmo_bench.commands.main import build_embed_parser, main
from tests.conftest import FIXTURES, REPO, needs_fixtures

SENTENCES = [["The", "cat", "sat", "."], ["Dogs", "bark"], ["A", "much", "longer", "sentence", "here", "now", "."],
             ["Paris", "is", "the", "capital", "of", "France", "."], ["Yes"]]
SHARED = ("--options", "--weights", "--encoder", "--model", "--pooling", "--revision", "--layers", "--dtype",
          "--max-tokens", "--batch-size", "--device")


def _actions(parser) -> dict[str, tuple]:
    return {a.option_strings[0]: (a.default, a.choices, a.type, a.help) for a in parser._actions if a.option_strings}


def test_extract_takes_exactly_embeds_encoder_options():
    embed, extract = _actions(build_embed_parser()), _actions(build_parser())
    assert {k: embed[k] for k in SHARED} == {k: extract[k] for k in SHARED}
    assert set(embed) - set(SHARED) == {"-h", "--input", "--output", "--overwrite"}
    assert set(extract) - set(SHARED) == {"-h", "--input", "--cache-dir", "--shard-sentences", "--cache-dtype",
                                          "--threads"}
    assert "Adam" not in extract["--device"][3] and "probe" not in extract["--device"][3]


def test_the_options_are_defined_once_not_copied():
    """No command module spells the shared flags: only cli_options.py does."""
    for module in ("elmo_bench/commands/extract.py", "elmo_bench/commands/main.py", "elmo_bench/commands/embed.py"):
        text = (REPO / module).read_text()
        assert not re.search(r"add_argument\(\"--(layers|dtype|max-tokens|batch-size|device)\"", text), module


def _write_input(tmp_path: Path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("".join(" ".join(s) + "\n" for s in SENTENCES))
    return path


def _extract(tmp_path: Path, capsys, *extra: str) -> tuple[int, dict, str]:
    code = main(["extract", "--input", str(_write_input(tmp_path)), "--cache-dir", str(tmp_path / "cache"),
                 "--shard-sentences", "2", "--device", "cpu", *extra])
    out, err = capsys.readouterr()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return code, (json.loads(lines[-1]) if lines else {}), err


@needs_fixtures
def test_a_second_extract_finds_the_entry_done(tmp_path, capsys):
    bilm = ["--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5")]
    code, first, err = _extract(tmp_path, capsys, *bilm)
    assert code == 0 and first["status"] == "computed" and first["shards"] == 3
    [said] = [line for line in err.splitlines() if line.startswith("extract: ")]
    assert said.startswith(f"extract: entry {first['entry']} computed in ")
    assert said.endswith("(3 shards, 5 sentences, 1 rank)")
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "cache" / first["entry"]).iterdir()}
    code, again, err = _extract(tmp_path, capsys, *bilm)
    assert code == 0 and again == {**first, "status": "found"}
    assert f"extract: entry {first['entry']} found done: nothing computed (3 shards, 5 sentences, 1 rank)" in err
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "cache" / first["entry"]).iterdir()} == before


@needs_fixtures
def test_batch_size_caps_the_sentences_of_an_encoder_batch(tmp_path):
    from elmo_bench.bilm.weights import bilm_identity, load_bilm
    from elmo_bench.encoders.cache import ActivationCache

    ident = bilm_identity(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5")
    entries = {}
    for cap in (None, 2):
        cache = ActivationCache(tmp_path / str(cap), load_bilm(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5"),
                                ident, progress=False, batch_sentences=cap)
        seen = []
        layers = cache.encoder.layers
        cache.encoder.layers = lambda words, layers=layers: (seen.append(len(words)), layers(words))[1]
        entry = cache.layers(SENTENCES)
        entries[cap] = (cache.key(SENTENCES), [entry.get(i) for i in range(len(SENTENCES))], seen)
    assert entries[None][2] == [5] and entries[2][2] == [2, 2, 1]      # all five in one batch of <= 4096 words
    assert entries[None][0] == entries[2][0]                            # memory, not the key
    for a, b in zip(entries[None][1], entries[2][1]):
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-3)             # the biLM is stateless: fp16 rounding apart


@pytest.mark.parametrize("layers, says", [
    ("top", "error: extract --layers top: a cache entry holds layers, not their top; expected all, every:K or "
            "comma-separated layer indices such as 0,2"),
    ("0,2", "error: extract --layers 0,2 applies to --encoder transformers only (found --encoder bilm: its cache "
            "entries hold every layer; embed picks layers of any encoder)"),
    ("0,0", "error: config: --layers names layer 0 more than once"),
])
def test_a_layer_choice_a_cache_entry_cannot_hold_is_one_line(tmp_path, capsys, layers, says):
    code, printed, err = _extract(tmp_path, capsys, "--layers", layers)
    assert code == 2 and printed == {} and err.startswith(says) and err.count("\n") == 1, err
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_dtype_with_the_bilm_is_one_line(tmp_path, capsys):
    code, printed, err = _extract(tmp_path, capsys, "--dtype", "bfloat16")
    assert code == 2 and err == "error: --dtype applies to --encoder transformers only (found --encoder bilm)\n"
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_layers_and_dtype_store_only_those_layers_computed_in_that_dtype(tmp_path, capsys):
    """A tiny random Llama built offline (tests/hf_tiny.py): ``--layers 0,2 --dtype bfloat16`` stores 2 layers, each
    sentence's the fp16 of the same encoder's direct extraction (one sentence a batch, as ``--batch-size 1``), under
    the key of a run with ``encoder.layers=[0,2] encoder.dtype=bfloat16``; the full float32 model keys another."""
    pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")
    import torch

    from elmo_bench.encoders.cache import ActivationCache
    from elmo_bench.encoders.transformers.encoder import TransformersEncoder
    from tests.hf_tiny import decoder_models

    model = str(decoder_models()["llama"])
    code, printed, _ = _extract(tmp_path, capsys, "--encoder", "transformers", "--model", model, "--layers", "0,2",
                                "--dtype", "bfloat16", "--max-tokens", "128", "--batch-size", "1")
    assert code == 0 and printed["status"] == "computed"
    entry = tmp_path / "cache" / printed["entry"]
    meta = json.loads((entry / "meta.json").read_text())
    assert meta["num_layers"] == 2 and meta["batch_sentences"] == 1
    assert meta["encoder"]["encoder_layer_indices"] == [0, 2] and meta["encoder"]["dtype"] == "bfloat16"
    direct = TransformersEncoder(model, layers=[0, 2], dtype="bfloat16")
    run = ActivationCache(tmp_path / "cache", direct, progress=False, shard_sentences=2)
    assert run.key(SENTENCES) == printed["entry"]                       # a run with those settings reads it
    full = ActivationCache(tmp_path / "other", TransformersEncoder(model), progress=False, shard_sentences=2)
    assert full.key(SENTENCES) != printed["entry"]
    stored = run.layers(SENTENCES)
    assert run.found is True
    with torch.no_grad():
        for i, sentence in enumerate(SENTENCES):
            expected = direct.layers([sentence])[0][0].numpy().astype(np.float16).astype(np.float32)
            assert stored.get(i).shape == (2, len(sentence), direct.dim)
            np.testing.assert_array_equal(stored.get(i), expected)
