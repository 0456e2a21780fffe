"""The exact ``datasets.Features`` of the Hugging Face hub datasets the readers support, and helpers that publish
a ``DatasetDict`` the two ways a user gets one: as a hub-style repository of parquet files (what ``load_dataset``
reads, offline here because the repository is a local directory) and as a ``save_to_disk`` copy.

Where each schema comes from (feature names, ClassLabel names and their order):
- ``conll2003``: the dataset card's ``dataset_info`` of eriktks/conll2003 and its loading script (47 POS, 23 chunk,
  9 NER names);
- ``snli``: stanfordnlp/snli's card (label: 0 entailment, 1 neutral, 2 contradiction; -1 = no gold label);
- ``squad``: rajpurkar/squad's card (answers is a Sequence of {text, answer_start int32}: a dict of lists);
- ``stanfordnlp/sst`` config ``ptb``: its card (one string column ``ptb_tree``); ``SetFit/sst5``: its
  dataset_info.json (text, label int64, label_text);
- ``conll2012_ontonotesv5`` config ``english_v4``: its loading script (``_info`` and the 49 english_v4 POS names
  and 37 named-entity names; one record per ``*gold_conll`` file; ``part_id`` holds column 2);
- ``conll2000``: its loading script (tokens, pos_tags a ClassLabel of 44 names, chunk_tags the 23 of conll2003;
  train and test splits only);
- ``universal_dependencies`` config ``en_ewt``: its loading script (every CoNLL-U row kept, multiword ranges and
  empty nodes included; upos a ClassLabel of 18 names, ``_`` among them; head = ``str(conllu head)``, "None" on
  those rows).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from datasets import ClassLabel, Dataset, DatasetDict, Features, Sequence, Value

CONLL2003_POS = ['"', "''", "#", "$", "(", ")", ",", ".", ":", "``", "CC", "CD", "DT", "EX", "FW", "IN", "JJ", "JJR",
                 "JJS", "LS", "MD", "NN", "NNP", "NNPS", "NNS", "NN|SYM", "PDT", "POS", "PRP", "PRP$", "RB", "RBR",
                 "RBS", "RP", "SYM", "TO", "UH", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "WDT", "WP", "WP$", "WRB"]
CONLL2003_CHUNK = ["O", "B-ADJP", "I-ADJP", "B-ADVP", "I-ADVP", "B-CONJP", "I-CONJP", "B-INTJ", "I-INTJ", "B-LST",
                   "I-LST", "B-NP", "I-NP", "B-PP", "I-PP", "B-PRT", "I-PRT", "B-SBAR", "I-SBAR", "B-UCP", "I-UCP",
                   "B-VP", "I-VP"]
CONLL2003_NER = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
CONLL2003 = Features({"id": Value("string"), "tokens": Sequence(Value("string")),
                      "pos_tags": Sequence(ClassLabel(names=CONLL2003_POS)),
                      "chunk_tags": Sequence(ClassLabel(names=CONLL2003_CHUNK)),
                      "ner_tags": Sequence(ClassLabel(names=CONLL2003_NER))})

CONLL2000_POS = ["''", "#", "$", "(", ")", ",", ".", ":", "``", "CC", "CD", "DT", "EX", "FW", "IN", "JJ", "JJR", "JJS",
                 "MD", "NN", "NNP", "NNPS", "NNS", "PDT", "POS", "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO",
                 "UH", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "WDT", "WP", "WP$", "WRB"]
CONLL2000 = Features({"id": Value("string"), "tokens": Sequence(Value("string")),
                      "pos_tags": Sequence(ClassLabel(names=CONLL2000_POS)),
                      "chunk_tags": Sequence(ClassLabel(names=CONLL2003_CHUNK))})

SNLI = Features({"premise": Value("string"), "hypothesis": Value("string"),
                 "label": ClassLabel(names=["entailment", "neutral", "contradiction"])})

SQUAD = Features({"id": Value("string"), "title": Value("string"), "context": Value("string"),
                  "question": Value("string"),
                  "answers": Sequence({"text": Value("string"), "answer_start": Value("int32")})})

SST_PTB = Features({"ptb_tree": Value("string")})
SETFIT_SST5 = Features({"text": Value("string"), "label": Value("int64"), "label_text": Value("string")})

ONTONOTES_EN_V4_POS = ["XX", "``", "$", "''", ",", "-LRB-", "-RRB-", ".", ":", "ADD", "AFX", "CC", "CD", "DT", "EX",
                       "FW", "HYPH", "IN", "JJ", "JJR", "JJS", "LS", "MD", "NFP", "NN", "NNP", "NNPS", "NNS", "PDT",
                       "POS", "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO", "UH", "VB", "VBD", "VBG", "VBN",
                       "VBP", "VBZ", "WDT", "WP", "WP$", "WRB"]
ONTONOTES_NE = ["O", "B-PERSON", "I-PERSON", "B-NORP", "I-NORP", "B-FAC", "I-FAC", "B-ORG", "I-ORG", "B-GPE", "I-GPE",
                "B-LOC", "I-LOC", "B-PRODUCT", "I-PRODUCT", "B-DATE", "I-DATE", "B-TIME", "I-TIME", "B-PERCENT",
                "I-PERCENT", "B-MONEY", "I-MONEY", "B-QUANTITY", "I-QUANTITY", "B-ORDINAL", "I-ORDINAL",
                "B-CARDINAL", "I-CARDINAL", "B-EVENT", "I-EVENT", "B-WORK_OF_ART", "I-WORK_OF_ART", "B-LAW", "I-LAW",
                "B-LANGUAGE", "I-LANGUAGE"]
CONLL2012_EN_V4 = Features({
    "document_id": Value("string"),
    "sentences": [{
        "part_id": Value("int32"),
        "words": Sequence(Value("string")),
        "pos_tags": Sequence(ClassLabel(names=ONTONOTES_EN_V4_POS)),
        "parse_tree": Value("string"),
        "predicate_lemmas": Sequence(Value("string")),
        "predicate_framenet_ids": Sequence(Value("string")),
        "word_senses": Sequence(Value("float32")),
        "speaker": Value("string"),
        "named_entities": Sequence(ClassLabel(names=ONTONOTES_NE)),
        "srl_frames": [{"verb": Value("string"), "frames": Sequence(Value("string"))}],
        "coref_spans": Sequence(Sequence(Value("int32"), length=3)),
    }],
})

UD_UPOS = ["NOUN", "PUNCT", "ADP", "NUM", "SYM", "SCONJ", "ADJ", "PART", "DET", "CCONJ", "PROPN", "PRON", "X", "_",
           "ADV", "INTJ", "VERB", "AUX"]
UD_EN_EWT = Features({"idx": Value("string"), "text": Value("string"), "tokens": Sequence(Value("string")),
                      "lemmas": Sequence(Value("string")), "upos": Sequence(ClassLabel(names=UD_UPOS)),
                      "xpos": Sequence(Value("string")), "feats": Sequence(Value("string")),
                      "head": Sequence(Value("string")), "deprel": Sequence(Value("string")),
                      "deps": Sequence(Value("string")), "misc": Sequence(Value("string"))})

HUB_SPLIT_NAMES = ("train", "validation", "test")


def dataset_dict(features: Features, splits: dict[str, list[dict[str, Any]]]) -> DatasetDict:
    """A DatasetDict with exactly ``features`` (ClassLabel columns take the names' ids)."""
    return DatasetDict({name: Dataset.from_list(rows, features=features) for name, rows in splits.items()})


def publish(dd: DatasetDict, root: Path, config: str | None = None) -> tuple[Path, Path]:
    """Write ``dd`` as a hub-style repository (``<config>/<split>-00000-of-00001.parquet`` and a README whose
    ``configs`` list the files, the layout of the hub's parquet datasets and conversions) and as a
    ``save_to_disk`` copy; returns (repository dir for ``hub_name``, save_to_disk dir for ``path``)."""
    repo, disk = root / "repo", root / "disk"
    sub = config or "default"
    (repo / sub).mkdir(parents=True, exist_ok=True)
    lines = ["---", "configs:", f"- config_name: {sub}", "  data_files:"]
    for split, ds in dd.items():
        ds.to_parquet(str(repo / sub / f"{split}-00000-of-00001.parquet"))
        lines += [f"  - split: {split}", f"    path: {sub}/{split}-*.parquet"]
    (repo / "README.md").write_text("\n".join(lines + ["---", ""]), encoding="utf-8")
    dd.save_to_disk(str(disk))
    return repo, disk
