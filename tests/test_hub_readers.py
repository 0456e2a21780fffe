"""Every reader's hub path (``data.source=hub``) and ``save_to_disk`` path (``data.source=disk``) against its
local-file reader on the same invented content.

Each test writes a few sentences in the official file format and the same content as the hub dataset holds it
(records written by hand from what that dataset's loading script makes of such a file), builds a real
``datasets.DatasetDict`` with the hub's exact schema (tests/hub_schemas.py), publishes it as a hub-style parquet
repository (read by ``datasets.load_dataset``: a local directory, so nothing is downloaded) and as a
``save_to_disk`` copy, and checks that all three give the same examples.
"""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

datasets = pytest.importorskip("datasets")

from elmo_bench.base.errors import DataError  # noqa: E402
from tests import hub_schemas as hs  # noqa: E402
from tests.conftest import REPO  # noqa: E402
from tests.warm_python import run_python


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """load_dataset caches what it prepares; keep that inside the test's tmp dir."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf_cache")


def _sources(tmp_path: Path, dd: Any, config: str | None = None, **extra: Any) -> dict[str, dict[str, Any]]:
    """Data configs reading ``dd`` from the hub-style repository and from the save_to_disk copy."""
    repo, disk = hs.publish(dd, tmp_path, config)
    return {"hub": {"source": "hub", "hub_name": str(repo), "hub_config": config, **extra},
            "disk": {"source": "disk", "path": str(disk), "hub_name": "unused", **extra}}


# --------------------------------------------------------------------------------------------------- CoNLL-2003
CONLL03_FILE = """-DOCSTART- -X- -X- O

EU NNP B-NP I-ORG
rejects VBZ B-VP O
German JJ B-NP I-MISC
call NN I-NP O
. . O O

Peter NNP B-NP I-PER
Blackburn NNP I-NP I-PER
met VBD B-VP O
Anna NNP B-NP I-PER
Karl NNP I-NP B-PER
( ( O O
Bonn NNP B-NP I-LOC
) ) O O
"""
# the hub's tags are IOB2: every entity starts with B- (Anna and Karl are two PER entities)
CONLL03_HUB = [
    {"id": "0", "tokens": ["EU", "rejects", "German", "call", "."], "pos_tags": ["NNP", "VBZ", "JJ", "NN", "."],
     "chunk_tags": ["B-NP", "B-VP", "B-NP", "I-NP", "O"], "ner_tags": ["B-ORG", "O", "B-MISC", "O", "O"]},
    {"id": "1", "tokens": ["Peter", "Blackburn", "met", "Anna", "Karl", "(", "Bonn", ")"],
     "pos_tags": ["NNP", "NNP", "VBD", "NNP", "NNP", "(", "NNP", ")"],
     "chunk_tags": ["B-NP", "I-NP", "B-VP", "B-NP", "I-NP", "O", "B-NP", "O"],
     "ner_tags": ["B-PER", "I-PER", "O", "B-PER", "B-PER", "O", "B-LOC", "O"]},
]


def test_conll2003_hub_and_disk_equal_the_file_reader(tmp_path: Path) -> None:
    from elmo_bench.tasks.ner.reader import read_splits

    path = tmp_path / "eng.txt"
    path.write_text(CONLL03_FILE, encoding="utf-8")
    local = read_splits({"source": "local", "train": str(path), "dev": str(path), "test": str(path)})
    dd = hs.dataset_dict(hs.CONLL2003, {s: CONLL03_HUB for s in hs.HUB_SPLIT_NAMES})
    assert dd["train"].features["ner_tags"].feature.names == hs.CONLL2003_NER
    for name, cfg in _sources(tmp_path, dd).items():
        got = read_splits(cfg)
        assert got == local, name
    assert local["train"][1]["tags"] == ["B-PER", "I-PER", "O", "B-PER", "B-PER", "O", "B-LOC", "O"]
    assert local["train"][1]["pos_tags"][5] == "(" and local["train"][0]["chunk"] == CONLL03_HUB[0]["chunk_tags"]


# --------------------------------------------------------------------------------------------------------- SNLI
SNLI_PAIRS = [  # (premise, its binary parse, hypothesis, its binary parse, gold label)
    ("A man in a hat (with feathers) is eating.",
     "( ( ( A man ) ( in ( a ( hat ( -LRB- ( with feathers ) -RRB- ) ) ) ) ) ( ( is eating ) . ) )",
     "Two kids aren't playing.", "( ( Two kids ) ( ( ( are n't ) playing ) . ) )", "contradiction"),
    ('A sign says "stop" near the road.',
     "( ( A sign ) ( ( says ( `` stop '' ) ) ( near ( the road ) ) ) . )",
     "A sign is near a road.", "( ( A sign ) ( ( is ( near ( a road ) ) ) . ) )", "entailment"),
    ("A dog runs.", "( ( A dog ) ( runs . ) )", "An animal moves.", "( ( An animal ) ( moves . ) )", "-"),
    ("Women sing, men dance.", "( ( ( Women sing ) , ( men dance ) ) . )",
     "People perform.", "( People ( perform . ) )", "neutral"),
]
SNLI_HUB_LABEL = {"entailment": 0, "neutral": 1, "contradiction": 2, "-": -1}


def test_snli_hub_tokenises_raw_sentences_like_the_binary_parses(tmp_path: Path) -> None:
    from elmo_bench.tasks.snli.task import SnliTask

    path = tmp_path / "snli.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for i, (p, pp, h, hp, label) in enumerate(SNLI_PAIRS):
            handle.write(json.dumps({"pairID": f"p{i}", "sentence1": p, "sentence1_binary_parse": pp,
                                     "sentence2": h, "sentence2_binary_parse": hp, "gold_label": label}) + "\n")
    local_task = SnliTask()
    local = local_task.read({"source": "local", "train": str(path), "dev": str(path), "test": str(path)})
    rows = [{"premise": p, "hypothesis": h, "label": SNLI_HUB_LABEL[label]} for p, _, h, _, label in SNLI_PAIRS]
    dd = hs.dataset_dict(hs.SNLI, {s: rows for s in hs.HUB_SPLIT_NAMES})
    assert dd["train"].features["label"].names == ["entailment", "neutral", "contradiction"]
    assert local["train"][0]["premise"][-3:] == ["is", "eating", "."]
    for name, cfg in _sources(tmp_path, dd).items():
        task = SnliTask()
        got = task.read(cfg)
        assert task.dropped == local_task.dropped == {"train": 1, "dev": 1, "test": 1}
        for split in ("train", "dev", "test"):  # the hub has no pairID: only the ids differ
            strip = [{k: v for k, v in e.items() if k != "id"} for e in got[split]]
            assert strip == [{k: v for k, v in e.items() if k != "id"} for e in local[split]], (name, split)
        assert "eating." not in got["train"][0]["premise"]


# -------------------------------------------------------------------------------------------------------- SQuAD
SQUAD_OBJ = {"version": "1.1", "data": [
    {"title": "Alpha", "paragraphs": [
        {"context": "Alpha Centauri is 4.37 light-years away.",
         "qas": [{"id": "a1", "question": "How far is Alpha Centauri?",
                  "answers": [{"text": "4.37 light-years", "answer_start": 18},
                              {"text": "4.37 light-years away", "answer_start": 18}]}]},
        {"context": "It was named in 1603.",
         "qas": [{"id": "a2", "question": "When was it named?", "answers": [{"text": "1603", "answer_start": 16}]}]}]},
    {"title": "Beta", "paragraphs": [
        {"context": "Beta is a Greek letter.",
         "qas": [{"id": "b1", "question": "What is Beta?", "answers": [{"text": "a Greek letter", "answer_start": 8}]},
                 {"id": "b2", "question": "Which alphabet?", "answers": [{"text": "Greek", "answer_start": 10}]}]}]},
]}


def _squad_rows(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"id": qa["id"], "title": art["title"], "context": para["context"], "question": qa["question"],
             "answers": {"text": [a["text"] for a in qa["answers"]],
                         "answer_start": [a["answer_start"] for a in qa["answers"]]}}
            for art in obj["data"] for para in art["paragraphs"] for qa in para["qas"]]


def test_squad_hub_and_disk_equal_the_file_reader(tmp_path: Path) -> None:
    from elmo_bench.tasks.squad.task import SquadTask

    path = tmp_path / "dev-v1.1.json"
    path.write_text(json.dumps(SQUAD_OBJ), encoding="utf-8")
    split = {"split_by_article": {"train": [0, 1], "test": [1, 2]}}
    local = SquadTask().read({"source": "local", "train": str(path), "test": str(path), **split})
    dd = hs.dataset_dict(hs.SQUAD, {"train": _squad_rows(SQUAD_OBJ), "validation": _squad_rows(SQUAD_OBJ)})
    assert dd["train"][0]["answers"] == {"text": ["4.37 light-years", "4.37 light-years away"],
                                         "answer_start": [18, 18]}
    for name, cfg in _sources(tmp_path, dd, hub_splits={"train": "train", "dev": None, "test": "validation"},
                              **split).items():
        assert SquadTask().read(cfg) == local, name
    assert [e["id"] for e in local["test"]] == ["b1", "b2"]


# ---------------------------------------------------------------------------------------------------------- SST
SST_TREES = ["(3 (2 It) (4 (3 (2 is) (4 (4 truly) (3 great))) (2 .)))",
             "(1 (2 The) (1 (1 (2 plot) (1 (1 drags) (2 (2 on) (2 (2 and) (2 on))))) (2 .)))"]


def test_sst_ptb_hub_config_gives_the_same_roots_and_phrases(tmp_path: Path) -> None:
    from elmo_bench.tasks.sst.reader import read_splits

    path = tmp_path / "trees.txt"
    path.write_text("\n".join(SST_TREES) + "\n", encoding="utf-8")
    files = {"train": str(path), "dev": str(path), "test": str(path)}
    local = read_splits({"source": "local", "train_phrases": "min4", **files})
    assert sum(not e["is_root"] for e in local["train"]) > 0 and all(e["is_root"] for e in local["test"])
    dd = hs.dataset_dict(hs.SST_PTB, {s: [{"ptb_tree": t} for t in SST_TREES] for s in hs.HUB_SPLIT_NAMES})
    for name, cfg in _sources(tmp_path, dd, config="ptb", train_phrases="min4").items():
        assert read_splits(cfg) == local, name


def test_setfit_sst5_schema_gives_root_sentences(tmp_path: Path) -> None:
    from elmo_bench.tasks.sst.reader import read_splits

    rows = [{"text": "it is truly great .", "label": 4, "label_text": "very positive"},
            {"text": "the plot drags on and on .", "label": 1, "label_text": "negative"}]
    dd = hs.dataset_dict(hs.SETFIT_SST5, {s: rows for s in hs.HUB_SPLIT_NAMES})
    got = read_splits(_sources(tmp_path, dd)["disk"])
    assert [(e["tokens"][-2:], e["label"], e["is_root"]) for e in got["test"]] == [
        (["great", "."], 4, True), (["on", "."], 1, True)]


# ------------------------------------------------------------------------------------ CoNLL-2012 (SRL and coref)
DOC = "bc/cctv/00/cctv_0001"
# doc part idx word POS parse lemma frameset sense speaker NE SRL... coref; part 001 reuses entity ids 0 and 1
CONLL12_FILE = f"""#begin document ({DOC}); part 000
{DOC} 0 0 John NNP (TOP(S(NP*) - - - Speaker#1 (PERSON) (ARG0*) (0)
{DOC} 0 1 saw VBD (VP* see 01 1 Speaker#1 * (V*) -
{DOC} 0 2 Mary NNP (NP*) - - - Speaker#1 (PERSON) (ARG1*) (1)
{DOC} 0 3 yesterday NN (NP*)) - - - Speaker#1 (DATE) (ARGM-TMP*) -
{DOC} 0 4 . . *)) - - - Speaker#1 * * -

{DOC} 0 0 She PRP (TOP(S(NP*) - - - Speaker#1 * (ARG0*) * (1)
{DOC} 0 1 said VBD (VP* say 01 1 Speaker#1 * (V*) * -
{DOC} 0 2 he PRP (SBAR(S(NP*) - - - Speaker#1 * (ARG1* (ARG0*) (0)
{DOC} 0 3 left VBD (VP* leave 01 1 Speaker#1 * * (V*) -
{DOC} 0 4 early RB (ADVP*))))) - - - Speaker#1 * *) (ARGM-TMP*) -
{DOC} 0 5 . . *)) - - - Speaker#1 * * * -

#end document
#begin document ({DOC}); part 001
{DOC} 1 0 The DT (TOP(S(NP(NP* - - - - * (ARG0* (0
{DOC} 1 1 man NN *) - - - - * * -
{DOC} 1 2 who WP (SBAR(WHNP*) - - - - * * -
{DOC} 1 3 he PRP (S(NP*) - - - - * * (1)
{DOC} 1 4 met VBD (VP*))))) meet 01 1 - * *) 0)
{DOC} 1 5 smiled VBD (VP*) smile 01 1 - * (V*) -
{DOC} 1 6 . . *)) - - - - * * -

#end document
"""


def _sentence(part: int, words: str, pos: str, lemmas: list, speaker: str | None, ne: list, frames: list,
              coref: list) -> dict[str, Any]:
    words_l = words.split()
    return {"part_id": part, "words": words_l, "pos_tags": pos.split(), "parse_tree": None,
            "predicate_lemmas": lemmas, "predicate_framenet_ids": [None if x is None else "01" for x in lemmas],
            "word_senses": [None if x is None else 1.0 for x in lemmas], "speaker": speaker,
            "named_entities": ne, "srl_frames": [{"verb": v, "frames": f.split()} for v, f in frames],
            "coref_spans": coref}


# one record per *gold_conll file; coref_spans come from a set in the loading script: listed here out of order
CONLL12_HUB = [{"document_id": DOC, "sentences": [
    _sentence(0, "John saw Mary yesterday .", "NNP VBD NNP NN .", [None, "see", None, None, None], "Speaker#1",
              ["B-PERSON", "O", "B-PERSON", "B-DATE", "O"], [("saw", "B-ARG0 B-V B-ARG1 B-ARGM-TMP O")],
              [[1, 2, 2], [0, 0, 0]]),
    _sentence(0, "She said he left early .", "PRP VBD PRP VBD RB .", [None, "say", None, "leave", None, None],
              "Speaker#1", ["O"] * 6,
              [("said", "B-ARG0 B-V B-ARG1 I-ARG1 I-ARG1 O"), ("left", "O O B-ARG0 B-V B-ARGM-TMP O")],
              [[0, 2, 2], [1, 0, 0]]),
    _sentence(1, "The man who he met smiled .", "DT NN WP PRP VBD VBD .",
              [None, None, None, None, "meet", "smile", None], None, ["O"] * 7,
              [("smiled", "B-ARG0 I-ARG0 I-ARG0 I-ARG0 I-ARG0 B-V O")], [[1, 3, 3], [0, 0, 4]]),
]}]


def _conll12(tmp_path: Path) -> tuple[Path, dict[str, dict[str, Any]]]:
    path = tmp_path / "cctv_0001.v4_gold_conll"
    path.write_text(CONLL12_FILE, encoding="utf-8")
    dd = hs.dataset_dict(hs.CONLL2012_EN_V4, {s: CONLL12_HUB for s in hs.HUB_SPLIT_NAMES})
    return path, _sources(tmp_path, dd, config="english_v4")


def test_conll2012_srl_frames_equal_the_gold_conll_reader(tmp_path: Path) -> None:
    from elmo_bench.tasks.srl.task import SrlTask

    path, sources = _conll12(tmp_path)
    local = SrlTask().read({"source": "local", "format": "conll2012", "train": str(path), "dev": str(path),
                            "test": str(path)})
    assert [(e["predicate_lemma"], e["sentence_index"]) for e in local["train"]] == [
        ("see", 0), ("say", 1), ("leave", 1), ("smile", 2)]
    for name, cfg in sources.items():
        got = SrlTask().read(cfg)
        for split in ("train", "dev", "test"):  # ids name the source (file:line vs document:sentence)
            drop = ("id", "sentence_id")
            assert [{k: v for k, v in e.items() if k not in drop} for e in got[split]] == \
                [{k: v for k, v in e.items() if k not in drop} for e in local[split]], (name, split)


def _canonical(doc: dict[str, Any]) -> dict[str, Any]:
    """The example with clusters as a set of mention sets (their order carries no meaning) and no path."""
    out = {k: v for k, v in doc.items() if k not in ("path", "clusters")}
    out["clusters"] = {frozenset(map(tuple, c)) for c in doc["clusters"]}
    return out


def test_conll2012_coref_spans_give_one_document_per_part_like_the_file_reader(tmp_path: Path) -> None:
    from elmo_bench.tasks.coref.task import CorefTask

    path, sources = _conll12(tmp_path)
    local = CorefTask().read({"source": "local", "train": str(path), "dev": str(path), "test": str(path)})
    assert [d["id"] for d in local["train"]] == [f"{DOC};0", f"{DOC};1"]
    assert _canonical(local["train"][0])["clusters"] == {frozenset({(0, 0), (7, 7)}), frozenset({(2, 2), (5, 5)})}
    assert local["train"][1]["speakers"] is None and local["train"][0]["genre"] == "bc"
    for name, cfg in sources.items():
        got = CorefTask().read(cfg)
        for split in ("train", "dev", "test"):
            assert [_canonical(d) for d in got[split]] == [_canonical(d) for d in local[split]], (name, split)
        assert got["train"][1]["clusters"] == [[(0, 4)], [(3, 3)]]     # file order, whatever the hub's set order


# ------------------------------------------------------------------------------------------------ UD English-EWT
CONLLU = """# sent_id = ewt-0001
# text = I don't know.
1\tI\tI\tPRON\tPRP\t_\t4\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tknow\tknow\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = ewt-0002
# text = Sue likes tea and Joe coffee
1\tSue\tSue\tPROPN\tNNP\t_\t2\tnsubj\t_\t_
2\tlikes\tlike\tVERB\tVBZ\t_\t0\troot\t_\t_
3\ttea\ttea\tNOUN\tNN\t_\t2\tobj\t_\t_
4\tand\tand\tCCONJ\tCC\t_\t5\tcc\t_\t_
5\tJoe\tJoe\tPROPN\tNNP\t_\t2\tconj\t_\t_
5.1\tlikes\tlike\tVERB\tVBZ\t_\t_\t_\t2:conj\tCopyOf=2
6\tcoffee\tcoffee\tNOUN\tNN\t_\t5\torphan\t_\t_

"""


def _ud_rows() -> list[dict[str, Any]]:
    """What the hub's loading script stores for CONLLU: every row; conllu gives head None ("None") and xpos None
    on the multiword range and the empty node, upos "_" on the range."""
    rows = []
    for block in CONLLU.strip().split("\n\n"):
        lines = block.splitlines()
        idx = lines[0].split("=", 1)[1].strip()
        text = lines[1].split("=", 1)[1].strip()
        cols = [line.split("\t") for line in lines[2:]]
        head = ["None" if c[6] == "_" else c[6] for c in cols]
        rows.append({"idx": idx, "text": text, "tokens": [c[1] for c in cols], "lemmas": [c[2] for c in cols],
                     "upos": [c[3] for c in cols], "xpos": [None if c[4] == "_" else c[4] for c in cols],
                     "feats": ["None"] * len(cols), "head": head, "deprel": [c[7] for c in cols],
                     "deps": ["None" if c[8] == "_" else c[8] for c in cols], "misc": ["None"] * len(cols)})
    return rows


@pytest.mark.parametrize("tag_column", ["xpos", "upos"])
def test_ud_en_ewt_hub_drops_multiword_ranges_and_empty_nodes_like_the_file_reader(tmp_path: Path,
                                                                                   tag_column: str) -> None:
    from elmo_bench.tasks.pos.reader import read_splits

    path = tmp_path / "en_ewt-ud-dev.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    local = read_splits({"source": "local", "format": "conllu", "tag_column": tag_column, "train": str(path),
                         "dev": str(path), "test": str(path)})
    assert local["train"][0]["tokens"] == ["I", "do", "n't", "know", "."]
    dd = hs.dataset_dict(hs.UD_EN_EWT, {s: _ud_rows() for s in hs.HUB_SPLIT_NAMES})
    assert dd["train"][0]["upos"][1] == hs.UD_UPOS.index("_")
    for name, cfg in _sources(tmp_path, dd, config="en_ewt", format="conllu", tag_column=tag_column).items():
        assert read_splits(cfg) == local, name


def test_conll2000_hub_pos_tags_equal_the_file_reader(tmp_path: Path) -> None:
    from elmo_bench.tasks.pos.reader import read_splits

    path = tmp_path / "test.txt"
    path.write_text("Rockwell NNP B-NP\nsaid VBD B-VP\nit PRP B-NP\n's VBZ B-VP\n( ( O\n$ $ B-NP\n1 CD I-NP\n) ) O\n\n"
                    "Prices NNS B-NP\nfell VBD B-VP\n. . O\n", encoding="utf-8")
    local = read_splits({"source": "local", "format": "conll2000", "train": str(path), "test": str(path)})
    rows = [{"id": "0", "tokens": ["Rockwell", "said", "it", "'s", "(", "$", "1", ")"],
             "pos_tags": ["NNP", "VBD", "PRP", "VBZ", "(", "$", "CD", ")"],
             "chunk_tags": ["B-NP", "B-VP", "B-NP", "B-VP", "O", "B-NP", "I-NP", "O"]},
            {"id": "1", "tokens": ["Prices", "fell", "."], "pos_tags": ["NNS", "VBD", "."],
             "chunk_tags": ["B-NP", "B-VP", "O"]}]
    dd = hs.dataset_dict(hs.CONLL2000, {"train": rows, "test": rows})
    assert dd["test"].features["pos_tags"].feature.names[:3] == ["''", "#", "$"]
    for name, cfg in _sources(tmp_path, dd, format="conll2000", hub_splits={"dev": None}).items():
        assert read_splits(cfg) == local, name
    assert local["test"][0]["tags"][4:8] == ["(", "$", "CD", ")"]


# ------------------------------------------------------------------------------------------------------ failures
def test_disk_source_errors_name_the_directory_and_the_split(tmp_path: Path) -> None:
    from elmo_bench.tasks.ner.reader import read_splits

    with pytest.raises(DataError, match=r"nowhere: directory not found .*data\.path"):
        read_splits({"source": "disk", "path": str(tmp_path / "nowhere"), "hub_name": "conll2003"})
    dd = hs.dataset_dict(hs.CONLL2003, {"train": CONLL03_HUB})
    disk = _sources(tmp_path, dd)["disk"]
    with pytest.raises(DataError, match=r"no split 'validation' in this save_to_disk copy \(it has train\)"):
        read_splits(disk)
    with pytest.raises(DataError, match="source must be one of local, hub, disk"):
        read_splits({"source": "web"})


def test_offline_hub_load_fails_in_one_line_naming_the_dataset_and_source_disk(tmp_path: Path) -> None:
    """`python run.py ... data.source=hub` with the Hub unreachable (offline mode, empty cache): exit code 2 and
    one line on stderr, no traceback."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1"}
    cmd = ["run.py", "task=ner", "data=conll2003", "data.source=hub", "embedder=glove",
           "logger=disabled", "progress=false", f"paths.results_dir={tmp_path / 'r'}"]
    done = run_python(cmd, cwd=REPO, env=env, timeout=300)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("error: hub dataset 'conll2003' split 'train' could not be loaded")
    assert "save_to_disk" in lines[0] and "data.source=disk data.path=DIR" in lines[0]


# ----------------------------------------------------------------------------------------------- through run.py
def test_a_run_from_a_save_to_disk_copy_equals_the_run_from_the_files(tmp_path: Path) -> None:
    """`python run.py ... data.source=disk data.path=DIR` on the bundled NER sample saved in the conll2003 hub
    schema trains and scores exactly like the same run on the sample files."""
    from elmo_bench.tasks.ner.reader import read_splits

    samples = REPO / "tasks" / "ner" / "samples"
    local = read_splits({"source": "local", **{s: str(samples / f"sample.{s}") for s in ("train", "dev", "test")}})

    def row(e: dict[str, Any]) -> dict[str, Any]:  # the sample tags hyphens "-", a POS the hub's tagset lacks
        return {"id": e["id"], "tokens": e["tokens"], "pos_tags": [":" if p == "-" else p for p in e["pos_tags"]],
                "chunk_tags": e["chunk"], "ner_tags": e["tags"]}

    dd = hs.dataset_dict(hs.CONLL2003, {h: [row(e) for e in local[s]]
                                        for s, h in (("train", "train"), ("dev", "validation"), ("test", "test"))})
    dd.save_to_disk(str(tmp_path / "disk"))
    base = ["run.py", "task=ner", "embedder=glove", "trainer=quick", "trainer.max_epochs=1",
            "logger=disabled", "progress=false", f"paths.cache_dir={tmp_path / 'cache'}"]
    metrics = {}
    for name, extra in (("files", ["data=ner_sample"]),
                        ("disk", ["data=conll2003", "data.source=disk", f"data.path={tmp_path / 'disk'}"])):
        done = run_python(base + extra + [f"paths.results_dir={tmp_path / name}"], cwd=REPO, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        found = list((tmp_path / name).rglob("results.json"))
        assert len(found) == 1, found
        metrics[name] = json.loads(found[0].read_text())["metrics"]
    assert metrics["disk"] == metrics["files"] and metrics["files"]["test"]["f1"] >= 0
