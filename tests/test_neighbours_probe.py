"""probe=neighbours (issue 57 item 2, the paper's Table 4 made measurable): on a hand-made SemCor with two senses
of "bank" whose contexts are built apart, an encoder layer that sees the context agrees 1.0 and a context-free one
(the word's own vector, GloVe) scores exactly the sense prior; the record's keys; bad input; the agreement's ties;
and, with ../shared/data, the default words' rule and a small run on the shipped biLM."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.engine.probe_run import PRINTED
from elmo_bench.probe.lib.semcor import read_semcor
from elmo_bench.probe.neighbours.agreement import agreement_at_k
from elmo_bench.probe.neighbours.config import DEFAULT_WORDS, SEMCOR
from elmo_bench.probe.neighbours.contexts import ambiguous_lemmas
from tests.conftest import DATA, needs_data

REPO = Path(__file__).resolve().parents[1]
RIVER, MONEY = "1:17:01::", "1:14:00::"
#: 6 river banks and 9 money banks: the left neighbour of "bank" says which, the rest of the sentence varies
SENSES = [RIVER] * 6 + [MONEY] * 9
FILLER = ["we", "saw", "they", "found", "she", "left", "he", "liked", "you", "knew", "I", "had", "it", "was", "all"]
GLOVE = "bank 1 0 0\nriver 0 1 0\nmoney 0 0 1\nbanks 0.9 0.1 0\nshore 0.1 0.9 0.2\n"


def _semcor(folder) -> None:
    """A SemCor tagfile: each sentence "<filler> the river|money bank ." with bank sense-tagged."""
    sentences = []
    for i, lexsn in enumerate(SENSES):
        cue = "river" if lexsn == RIVER else "money"
        sentences.append(f'<s snum="{i + 1}"><wf cmd="ignore" pos="PRP">{FILLER[i]}</wf><wf cmd="ignore" pos="DT">'
                         f'the</wf><wf cmd="ignore" pos="NN">{cue}</wf><wf cmd="done" pos="NN" lemma="bank" wnsn="1" '
                         f'lexsn="{lexsn}">bank</wf><punc>.</punc></s>')
    folder.mkdir(parents=True)
    (folder / "brown1_br-z01").write_text('<contextfile concordance="brown"><context filename="br-z01" paras="yes">'
                                          f'<p pnum="1">{"".join(sentences)}</p></context></contextfile>')


def _overrides(tmp_path, *more: str) -> list[str]:
    if not (tmp_path / "semcor").is_dir():
        _semcor(tmp_path / "semcor")
        (tmp_path / "glove.txt").write_text(GLOVE)
    return ["probe=neighbours", "encoder=python", "encoder._target_=tests.user_encoder.hashing.HashingEncoder",
            "+encoder.dim=16", f"probe.semcor={tmp_path / 'semcor'}", f"probe.glove_path={tmp_path / 'glove.txt'}",
            "probe.words=[bank]", "probe.k=3", f"paths.cache_dir={tmp_path / 'cache'}", "device=cpu",
            "logger=disabled", "progress=false", *more]


def test_agreement_is_one_where_contexts_separate_and_the_sense_prior_where_nothing_does(tmp_path):
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe

    run_dir = tmp_path / "run"
    saved = run_probe(job_run(_overrides(tmp_path)), run_dir)
    metrics = saved["metrics"]["all"]
    # HashingEncoder: layer 0 the word form's vector (context-free), layer 1 the mean of its two neighbours
    prior = (6 * 5 + 9 * 8) / (15 * 14)                  # the other contexts sharing each query's sense, averaged
    assert metrics["sense_prior"] == pytest.approx(prior)
    assert metrics["most_frequent_sense"] == pytest.approx(9 / 15)
    assert metrics["layer_1_sense_agreement"] == 1.0 and metrics["average_sense_agreement"] == 1.0
    assert metrics["layer_0_sense_agreement"] == pytest.approx(prior)
    assert metrics["glove_sense_agreement"] == pytest.approx(prior)          # one GloVe vector for every "bank"
    assert metrics["layer_1_sense_agreement_lo"] == metrics["layer_1_sense_agreement_hi"] == 1.0
    assert metrics["layer_0_sense_agreement_lo"] <= prior <= metrics["layer_0_sense_agreement_hi"]
    assert set(metrics) == {f"{v}_sense_agreement{s}" for v in ("layer_0", "layer_1", "average", "glove")
                            for s in ("", "_lo", "_hi")} | {"sense_prior", "most_frequent_sense", "queries"}
    assert metrics["queries"] == 15 and saved["main_metric"] == "layer_1_sense_agreement"
    assert saved["task"] == "neighbours" and saved["probe"]["name"] == "neighbours"
    assert saved["probe"]["settings"]["k"] == 3
    printed = saved[PRINTED]                                                     # what the run prints
    assert printed["words"]["bank.n"]["contexts"] == 15 and printed["words"]["bank.n"]["senses"] == 2
    assert [n[0] for n in printed["glove_neighbours"]["bank"]] == ["banks", "shore", "river"]
    rows = [r for r in printed["table4"] if r["view"] == "layer_1"]
    assert [r["query_sense"] for r in rows] == [f"bank%{MONEY}", f"bank%{RIVER}"]   # one per sense, commonest first
    assert all(r["same_sense"] and r["neighbour_sense"] == r["query_sense"] for r in rows)
    assert rows[0]["query"] == "he the money [bank] ." and "[bank]" in rows[0]["neighbour"]


def test_words_none_of_which_is_in_semcor_is_one_line_and_nothing_written(tmp_path):
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe

    run_dir = tmp_path / "run"
    with pytest.raises(DataError, match=r"probe\.words: none of otter, bank\.v is a sense-tagged lemma") as err:
        run_probe(job_run(_overrides(tmp_path, "probe.words=[otter,bank.v]")), run_dir)
    assert "\n" not in str(err.value) and not run_dir.exists()
    with pytest.raises(ConfigError, match=r"probe\.words"):
        job_run(_overrides(tmp_path, "probe.words=[]"))


def test_run_py_exits_2_with_one_line_on_words_absent_from_semcor(tmp_path):
    from tests.warm_python import run_python

    out = tmp_path / "out"
    overrides = [*_overrides(tmp_path, "probe.words=[otter]"), f"paths.results_dir={tmp_path / 'results'}",
                 f"hydra.run.dir={out}"]
    done = run_python(["run.py", *overrides], cwd=REPO, timeout=300)
    lines = [line for line in done.stderr.strip().splitlines() if line.strip() and not line.startswith("[20")]
    assert done.returncode == 2 and len(lines) == 1 and "probe.words: none of otter" in lines[0], done.stderr[-3000:]
    assert not out.exists() and not (tmp_path / "results").exists()


def test_a_word_missing_is_one_warning_and_glove_without_its_source_is_left_out(tmp_path, caplog, monkeypatch):
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe
    from elmo_bench.probe.neighbours import glove_rows

    monkeypatch.setattr(glove_rows, "KUMO", "no_such_package_for_this_test")
    overrides = [o for o in _overrides(tmp_path, "probe.words=[bank,otter]") if not o.startswith("probe.glove_path")]
    with caplog.at_level(logging.WARNING):
        saved = run_probe(job_run(overrides), tmp_path / "run")
    assert "probe.words: otter not sense-tagged" in caplog.text and "GloVe's rows are left out" in caplog.text
    assert "glove_sense_agreement" not in saved["metrics"]["all"] and saved[PRINTED]["glove_neighbours"] is None


def test_ties_at_the_kth_neighbour_are_shared_out():
    similarities = np.array([0.9, 0.5, 0.5, 0.5, 0.1])
    agrees = np.array([True, True, False, False, True])
    assert agreement_at_k(similarities, agrees, 1) == 1.0
    assert agreement_at_k(similarities, agrees, 2) == pytest.approx((1 + 1 / 3) / 2)
    assert agreement_at_k(similarities, agrees, 4) == pytest.approx(2 / 4)
    assert agreement_at_k(similarities, agrees, 9) == pytest.approx(3 / 5)          # k above the candidates


@needs_data
def test_the_default_words_are_plays_and_the_rules():
    semcor = read_semcor(DATA / SEMCOR, progress=False)
    assert list(DEFAULT_WORDS) == ["play", *(f"{w}.n" for w in ambiguous_lemmas(semcor))]


@needs_data
def test_a_small_run_on_the_shipped_bilm(tmp_path):
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import run_probe

    run = job_run(["probe=neighbours", "bilm=shipped", f"paths.data_root={DATA}", "probe.words=[play.n]",
                   "probe.max_contexts=12", f"paths.cache_dir={tmp_path / 'cache'}", "device=cpu", "logger=disabled",
                   "progress=false"])
    saved = run_probe(run, tmp_path / "run")
    metrics = saved["metrics"]["all"]
    assert metrics["queries"] == 12 and 0 < metrics["sense_prior"] < 1 and saved["data"]["contexts"] == {"play.n": 12}
    for view in ("layer_0", "layer_1", "layer_2", "average"):
        assert metrics[f"{view}_sense_agreement_lo"] <= metrics[f"{view}_sense_agreement"] \
            <= metrics[f"{view}_sense_agreement_hi"]
    rows = saved[PRINTED]["table4"]
    assert {r["word"] for r in rows} == {"play.n"} and all("[" in r["query"] and "[" in r["neighbour"] for r in rows)
