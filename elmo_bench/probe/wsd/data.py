"""WSD evaluation data: Raganato et al. (2017) evaluation sets and answer-key files. SemCor (training) is read by
elmo_bench.probe.lib.semcor, which every sense probe shares.

An evaluation set becomes :class:`WsdSentence` as SemCor does: the biLM tokens of a sentence plus the sense-tagged
spans in it. A multiword expression (Raganato ``<instance>belong to</instance>``) is split into its words for the
biLM and its span covers them all; the probe averages the span's vectors. The probe groups senses by (lemma,
WordNet pos); the pos of a Raganato instance is read from its ``pos`` attribute (NOUN, VERB, ADJ, ADV).
"""
from __future__ import annotations

from pathlib import Path

from elmo_bench.base.errors import DataError
from elmo_bench.probe.lib.semcor import SenseSpan, WsdSentence, parse_xml, xml_words

UNIVERSAL_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
EVAL_SETS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL")


def read_key_file(path: str | Path, strict: bool = True) -> dict[str, set[str]]:
    """``instance_id key [key ...]`` a line → {id: keys}; repeated ids are merged (as the framework's scorer does).

    A line with an id and no key is an error, or skipped with ``strict=False`` (the scorer's behaviour).
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found (expected 'instance_id sensekey [sensekey ...]' lines)")
    keys: dict[str, set[str]] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        cols = line.split()
        if not cols:
            continue
        if len(cols) < 2:
            if not strict:
                continue
            raise DataError(f"{path}:{lineno}: expected 'instance_id sensekey [sensekey ...]', found {line!r}")
        keys.setdefault(cols[0], set()).update(cols[1:])
    return keys


def read_eval_xml(path: str | Path) -> list[WsdSentence]:
    """A Raganato ``<corpus><text><sentence><wf|instance id lemma pos>`` file; spans = the instances."""
    path = Path(path)
    root = parse_xml(path)
    sentences: list[WsdSentence] = []
    for s in root.iter("sentence"):
        sentence = WsdSentence(s.get("id") or f"{path.name}.{len(sentences)}", [])
        for element in s:
            words = xml_words(element.text)
            start = len(sentence.tokens)
            sentence.tokens.extend(words)
            if element.tag != "instance":
                continue
            iid, lemma, pos = element.get("id"), element.get("lemma"), element.get("pos")  # not a plug-in name: XML attr
            if not iid or not lemma or not words:
                raise DataError(f"{path}: sentence {sentence.id}: <instance> needs id, lemma and a word, "
                                f"found id={iid!r} lemma={lemma!r} text={element.text!r}")
            sentence.spans.append(SenseSpan(iid, start, len(sentence.tokens), lemma.lower(),
                                            UNIVERSAL_POS.get(pos or "", (pos or "x").lower())))
        sentences.append(sentence)
    return sentences


def read_eval_set(root: str | Path, name: str) -> tuple[list[WsdSentence], dict[str, set[str]], Path]:
    """``root/<name>/<name>.data.xml`` and its gold keys; every instance must have a gold key."""
    directory = Path(root) / name
    xml, gold_path = directory / f"{name}.data.xml", directory / f"{name}.gold.key.txt"
    sentences = read_eval_xml(xml)
    gold = read_key_file(gold_path)
    missing = [s.id for sent in sentences for s in sent.spans if s.id not in gold]
    if missing:
        raise DataError(f"{gold_path}: no gold key for {len(missing)} instance(s) of {xml}, e.g. {missing[0]}")
    return sentences, gold, gold_path
