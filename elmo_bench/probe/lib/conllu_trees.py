"""CoNLL-U dependency trees for the structural probes: words, XPOS, UPOS and the basic HEAD column, checked.

Multiword-token ranges (``3-4``) and empty nodes (``8.1``) are dropped, as in ``elmo_bench.data.conllu.read_conllu``:
the words are the syntactic words that carry the heads. Every sentence must be one tree over its words: each head an
integer in 0..n, exactly one word with head 0 (the root), no cycle. Anything else is one ``DataError`` naming the
file and the line of the offending word (for "no root", the sentence's first line), so a probe never trains on a
broken tree.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from elmo_bench.base.errors import DataError
from elmo_bench.data.conllu import head_id, is_word_row, word_id
from elmo_bench.data.textio import open_text


@dataclass
class TreeSentence:
    """One sentence: ``heads[i]`` is word i's head as a 1-based word index (0 = the root), ``lines[i]`` its line."""

    id: str
    tokens: list[str] = field(default_factory=list)
    xpos: list[str] = field(default_factory=list)
    upos: list[str] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    deprel: list[str] = field(default_factory=list)   # the universal relation (the part before ":")
    lines: list[int] = field(default_factory=list)
    first_line: int = 0


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with open_text(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            yield lineno, line.rstrip("\n")


def _word(path: Path, lineno: int, line: str, sentence: TreeSentence) -> None:
    cols = line.split("\t")
    if len(cols) != 10:
        raise DataError(f"{path}:{lineno}: expected 10 tab-separated CoNLL-U columns, found {len(cols)}: {line[:80]!r}")
    if not is_word_row(cols[0]):  # multiword-token range or empty node: not a word of the basic tree
        return
    word_id(cols[0], f"{path}:{lineno}", expected=len(sentence.tokens) + 1)
    head = head_id(cols[6], f"{path}:{lineno}")  # ASCII digits: "²".isdigit() is True, int("²") an error
    sentence.tokens.append(cols[1])
    sentence.upos.append(cols[3])
    sentence.xpos.append(cols[4])
    sentence.heads.append(head)
    sentence.deprel.append(cols[7].split(":", 1)[0])
    sentence.lines.append(lineno)


def check_tree(path: Path | str, sentence: TreeSentence) -> None:
    """DataError naming file and line unless ``sentence.heads`` is one tree: heads in 0..n, one root, no cycle."""
    n = len(sentence.heads)
    for head, lineno in zip(sentence.heads, sentence.lines):
        if head > n:
            raise DataError(f"{path}:{lineno}: HEAD {head} is out of range (expected 0..{n}, the sentence's words)")
    roots = [i for i, head in enumerate(sentence.heads) if head == 0]
    if not roots:
        raise DataError(f"{path}:{sentence.first_line}: sentence {sentence.id} has no root (expected one word with "
                        f"HEAD 0)")
    if len(roots) > 1:
        raise DataError(f"{path}:{sentence.lines[roots[1]]}: a second root (HEAD 0) in sentence {sentence.id} "
                        f"(expected exactly one)")
    for start in range(n):
        seen = set()
        node = start
        while node != -1:
            if node in seen:
                raise DataError(f"{path}:{sentence.lines[node]}: a cycle through word {node + 1} in sentence "
                                f"{sentence.id} (expected every HEAD chain to reach the root)")
            seen.add(node)
            node = sentence.heads[node] - 1


def read_trees(path: str | Path, split: str = "data") -> list[TreeSentence]:
    """One CoNLL-U file → checked ``TreeSentence`` list, in file order."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found (expected a CoNLL-U file with a HEAD column)")
    sentences: list[TreeSentence] = []
    current = TreeSentence(id="")

    def flush() -> TreeSentence:
        if current.tokens:
            current.id = current.id or f"{split}-{len(sentences)}"
            check_tree(path, current)
            sentences.append(current)
        return TreeSentence(id="")

    for lineno, line in _lines(path):
        if not line.strip():
            current = flush()
            continue
        if not current.first_line:
            current.first_line = lineno
        if line.startswith("#"):
            if line.startswith("# sent_id") and "=" in line:
                current.id = line.split("=", 1)[1].strip()
            continue
        _word(path, lineno, line, current)
    flush()
    return sentences


def depths(heads: list[int]) -> list[int]:
    """Each word's number of edges to the root (root 0); ``heads`` 1-based, 0 = root, already checked."""
    out = []
    for start in range(len(heads)):
        d, node = 0, start
        while heads[node] != 0:
            node = heads[node] - 1
            d += 1
        out.append(d)
    return out
