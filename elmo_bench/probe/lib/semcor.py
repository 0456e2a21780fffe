"""SemCor 3.0 in its original tagfile format, as the sense probes read it: each sentence's biLM tokens and its
sense-tagged spans (``SenseSpan``). A multiword expression (SemCor ``took_place``) is split into its words for the
encoder and its span covers them all.

Sense keys are WordNet 3.0 keys ``lemma%ss_type:lex_filenum:lex_id:head_word:head_id``. SemCor writes the lemma and
the part after ``%`` (``lexsn``) separately; ``;`` separates several senses of one word. The pos of a SemCor word is
read from its key (ss_type 1 noun, 2 verb, 3/5 adjective, 4 adverb).
"""
from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from tqdm import tqdm

from elmo_bench.base.errors import DataError

SS_TYPE_POS = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}


@dataclass
class SenseSpan:
    """One sense-tagged word: tokens [start, end) of its sentence; ``keys`` empty for an evaluation instance."""

    id: str
    start: int
    end: int
    lemma: str
    pos: str  # n | v | a | r
    keys: tuple[str, ...] = ()


@dataclass
class WsdSentence:
    id: str
    tokens: list[str]
    spans: list[SenseSpan] = field(default_factory=list)


def xml_words(text: str | None) -> list[str]:
    """The biLM tokens of one ``<wf>``/``<instance>`` text: underscores and spaces separate the words of an MWE."""
    return (text or "").replace("_", " ").split()


def parse_xml(path: Path) -> ET.Element:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            return ET.parse(handle).getroot()
    except ET.ParseError as err:
        raise DataError(f"{path}:{err.position[0]}: not well-formed XML ({err})") from None
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise DataError(f"{path}: truncated or corrupt gzip file ({exc}); expected a complete .gz file") from None


def read_semcor_file(path: str | Path) -> list[WsdSentence]:
    """One SemCor tagfile (``<contextfile><context><p><s><wf cmd pos lemma wnsn lexsn>word</wf><punc>``).

    A ``<wf>`` is sense-tagged when it has ``lexsn``; its keys are ``lemma%lexsn`` for each ``;``-separated lexsn.
    """
    path = Path(path)
    root = parse_xml(path)
    name = path.name[: -len(".gz")] if path.name.endswith(".gz") else path.name
    sentences: list[WsdSentence] = []
    for s in root.iter("s"):
        sid = f"{name}.s{s.get('snum', len(sentences))}"
        sentence = WsdSentence(sid, [])
        for element in s:
            words = xml_words(element.text)
            if element.tag not in ("wf", "punc") or not words:
                continue
            start = len(sentence.tokens)
            sentence.tokens.extend(words)
            lexsn = element.get("lexsn")
            if element.tag != "wf" or not lexsn:
                continue
            lemma = element.get("lemma")
            senses = [x for x in lexsn.split(";") if x]
            if not lemma or not senses or any(x[0] not in SS_TYPE_POS or x.count(":") != 4 for x in senses):
                raise DataError(f"{path}: sentence {sid}, word {element.text!r}: expected lemma and lexsn "
                                f"'ss_type:lex_filenum:lex_id:head_word:head_id', found lemma={lemma!r} lexsn={lexsn!r}")
            keys = tuple(f"{lemma}%{x}" for x in senses)
            sentence.spans.append(SenseSpan(f"{sid}.t{len(sentence.spans)}", start, len(sentence.tokens),
                                            lemma.lower(), SS_TYPE_POS[senses[0][0]], keys))
        if sentence.tokens:
            sentences.append(sentence)
    return sentences


def semcor_files(directory: str | Path) -> list[Path]:
    """The tagfiles of a SemCor directory: flat ``brown1_br-a01(.gz)`` files or ``brown*/tagfiles/*`` trees."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(f"{directory}: not a directory (expected SemCor 3.0 tagfiles, e.g. brown1_br-a01.gz)")
    files = sorted(p for p in directory.rglob("*") if p.is_file() and p.name.startswith(("brown", "br-")))
    if not files:
        raise DataError(f"{directory}: no SemCor tagfiles (expected files named brown1_br-a01.gz, br-a01, ...)")
    return files


def read_semcor(directory: str | Path, max_sentences: int | None = None, progress: bool = True) -> list[WsdSentence]:
    """Every sentence of SemCor in file order (brown1, brown2, brownv), the first ``max_sentences`` if given."""
    sentences: list[WsdSentence] = []
    for path in tqdm(semcor_files(directory), desc="SemCor", unit="file", disable=not progress):
        sentences.extend(read_semcor_file(path))
        if max_sentences and len(sentences) >= max_sentences:
            return sentences[:max_sentences]
    return sentences


def count_spans(sentences: Iterable[WsdSentence]) -> int:
    return sum(len(s.spans) for s in sentences)


def token_lists(sentences: Sequence[WsdSentence]) -> list[list[str]]:
    return [s.tokens for s in sentences]
