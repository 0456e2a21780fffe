"""SRL readers: one example per (sentence, gold predicate), with BIO tags converted from bracket columns.

Three sources give the same example shape::

    {"id": str, "tokens": list[str], "predicate_index": int, "predicate_lemma": str,
     "tags": list[str] (BIO, V included), "sentence_id": str, "sentence_index": int}

* the CoNLL-2005 release layout: per split a directory with ``words/*.words.gz`` and ``props/*.props.gz`` files
  that line up row by row (train has one pair per WSJ section);
* CoNLL-2012 ``*gold_conll`` files (OntoNotes): word in column 4, predicate lemma in column 7, the SRL bracket
  columns between the named-entity column and the last (coreference) column;
* the hub dataset ``conll2012_ontonotesv5`` and its ``srl_frames`` (BIO tags per verb).
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.data_options import data_options
from elmo_bench.data.splits import read_split as shared_read_split
from elmo_bench.data.srl_spans import Span, bio_to_spans, brackets_to_spans, spans_to_bio
from elmo_bench.data.textio import open_text

#: one sentence and predicate of the readers below: its fields by name
Example = dict[str, Any]


@dataclass(frozen=True)
class SrlFiles:
    """``data`` keys of an SRL reader beyond the common ones, defaults written here only (the SRL task's data options,
    tasks/srl/config.py, are these; edge_srl reads its CoNLL-2005 files with them)."""

    format: str = "conll05"                 # conll05 (words/ and props/ per split) | conll2012 (one JSON-lines file)
    words_glob: str = "words/*.words.gz"    # conll05: the words files, relative to each split directory
    props_glob: str = "props/*.props.gz"    # conll05: the props files, likewise


DEFAULT_WORDS_GLOB = SrlFiles.words_glob
DEFAULT_PROPS_GLOB = SrlFiles.props_glob


def _open_text(path: Path) -> io.TextIOBase:
    return open_text(path)  # decoding errors name the file, line and byte offset


def read_props_blocks(path: str | Path) -> Iterator[tuple[list[list[str]], list[int]]]:
    """Yield (rows split on whitespace, 1-based line numbers) per blank-line separated sentence of a column file."""
    path = Path(path)
    rows: list[list[str]] = []
    lines: list[int] = []
    with _open_text(path) as handle:
        for lineno, line in enumerate(handle, 1):
            fields = line.split()
            if not fields:
                if rows:
                    yield rows, lines
                rows, lines = [], []
                continue
            rows.append(fields)
            lines.append(lineno)
    if rows:
        yield rows, lines


def props_sentence_to_propositions(rows: Sequence[Sequence[str]], lines: Sequence[int],
                                   path: str | Path) -> list[tuple[int, str, list[Span]]]:
    """One props sentence → [(predicate index, lemma, spans)], one entry per non-'-' target, in column order."""
    width = len(rows[0])
    for row, ln in zip(rows, lines):
        if len(row) != width:
            raise DataError(f"{path}:{ln}: expected {width} columns like the sentence's first row, got {len(row)}")
    targets = [i for i, row in enumerate(rows) if row[0] != "-"]
    if len(targets) != width - 1:
        raise DataError(f"{path}:{lines[0]}: sentence has {len(targets)} target verbs in column 1 but "
                        f"{width - 1} argument columns")
    where = [f"{path}:{ln}" for ln in lines]
    out = []
    for col, pred in enumerate(targets, 1):
        spans = brackets_to_spans([row[col] for row in rows], where)
        out.append((pred, rows[pred][0], spans))
    return out


def read_conll05_pair(words_path: str | Path, props_path: str | Path, start_index: int = 0) -> list[Example]:
    """Read one words/props file pair that must line up row by row."""
    words_path, props_path = Path(words_path), Path(props_path)
    examples: list[Example] = []
    sent_index = start_index
    with _open_text(words_path) as wh, _open_text(props_path) as ph:
        tokens: list[str] = []
        rows: list[list[str]] = []
        lines: list[int] = []
        lineno = 0
        while True:
            wline, pline = wh.readline(), ph.readline()
            lineno += 1
            if not wline and not pline:
                break
            wfields, pfields = wline.split(), pline.split()
            if bool(wfields) != bool(pfields):
                raise DataError(f"{words_path}:{lineno} / {props_path}:{lineno}: words and props do not line up "
                                f"(one has a token row, the other a blank line or end of file)")
            if wfields:
                tokens.append(wfields[0])
                rows.append(pfields)
                lines.append(lineno)
                continue
            if rows:
                examples.extend(_sentence_examples(tokens, rows, lines, props_path, sent_index))
                sent_index += 1
            tokens, rows, lines = [], [], []
        if rows:
            examples.extend(_sentence_examples(tokens, rows, lines, props_path, sent_index))
    return examples


def _sentence_examples(tokens: list[str], rows: list[list[str]], lines: list[int], path: Path,
                       sent_index: int) -> list[Example]:
    sentence_id = f"{path.name}:{lines[0]}"
    out = []
    for pred, lemma, spans in props_sentence_to_propositions(rows, lines, path):
        out.append({
            "id": f"{sentence_id}:{pred}",
            "tokens": list(tokens),
            "predicate_index": pred,
            "predicate_lemma": lemma,
            "tags": spans_to_bio(spans, len(tokens)),
            "sentence_id": sentence_id,
            "sentence_index": sent_index,
        })
    return out


def read_conll05_split(split_dir: str | Path, words_glob: str = DEFAULT_WORDS_GLOB,
                       props_glob: str = DEFAULT_PROPS_GLOB) -> list[Example]:
    """All words/props pairs of one release split directory, paired by their section name."""
    split_dir = Path(split_dir)
    words = sorted(split_dir.glob(words_glob))
    props = sorted(split_dir.glob(props_glob))
    if not words or not props:
        raise DataError(f"{split_dir}: no files match {words_glob!r} and {props_glob!r}")
    if len(words) != len(props):
        raise DataError(f"{split_dir}: {len(words)} words files but {len(props)} props files")
    examples: list[Example] = []
    sent_index = 0
    for w, p in zip(words, props):
        if w.name.split(".words")[0] != p.name.split(".props")[0]:
            raise DataError(f"{split_dir}: words file {w.name} pairs with props file {p.name}; expected the same section")
        part = read_conll05_pair(w, p, sent_index)
        if part:
            sent_index = part[-1]["sentence_index"] + 1
        examples.extend(part)
    return examples


def read_conll2012_srl(path: str | Path) -> list[Example]:
    """CoNLL-2012 ``*gold_conll`` file (or a directory searched recursively for them)."""
    path = Path(path)
    files = sorted(path.rglob("*gold_conll")) if path.is_dir() else [path]
    if not files:
        raise DataError(f"{path}: no *gold_conll files found")
    examples: list[Example] = []
    sent_index = 0
    for file in files:
        for rows, lines in read_props_blocks(file):
            rows_lines = [(r, ln) for r, ln in zip(rows, lines) if not r[0].startswith("#")]
            if not rows_lines:
                continue
            rows = [r for r, _ in rows_lines]
            lines = [ln for _, ln in rows_lines]
            width = len(rows[0])
            for r, ln in zip(rows, lines):
                if len(r) != width:
                    raise DataError(f"{file}:{ln}: expected {width} columns like the sentence's first row, got {len(r)}")
                if width < 12:
                    raise DataError(f"{file}:{ln}: expected at least 12 columns in a *gold_conll row, got {width}")
            tokens = [r[3] for r in rows]
            where = [f"{file}:{ln}" for ln in lines]
            sentence_id = f"{file.name}:{lines[0]}"
            for col in range(11, width - 1):
                spans = brackets_to_spans([r[col] for r in rows], where)
                verbs = [s for s in spans if s[0] == "V"]
                if not verbs:
                    raise DataError(f"{file}:{lines[0]}: SRL column {col + 1} has no (V*) predicate")
                pred = verbs[0][1]
                examples.append({
                    "id": f"{sentence_id}:{pred}", "tokens": tokens, "predicate_index": pred,
                    "predicate_lemma": rows[pred][6], "tags": spans_to_bio(spans, len(tokens)),
                    "sentence_id": sentence_id, "sentence_index": sent_index,
                })
            sent_index += 1
    return examples


def hub_records_to_examples(records: Iterable[Mapping[str, Any]], split: str) -> list[Example]:
    """Records of the hub dataset ``conll2012_ontonotesv5`` (one per ``*gold_conll`` file, ``sentences[*]`` with
    ``words``, ``predicate_lemmas`` and ``srl_frames`` = [{verb: the predicate's word, frames: BIO tags}]).

    The fields equal ``read_conll2012_srl``'s on the same file (the lemma comes from ``predicate_lemmas``, as the
    file reader takes column 7); only ``id`` / ``sentence_id`` name the source differently.
    """
    examples: list[Example] = []
    sent_index = 0
    for doc in records:
        for s_no, sent in enumerate(doc["sentences"]):
            tokens = list(sent["words"])
            lemmas = list(sent.get("predicate_lemmas") or [None] * len(tokens))
            sentence_id = f"{doc['document_id']}:{s_no}"
            for frame in sent.get("srl_frames") or []:
                tags = list(frame["frames"])
                if len(tags) != len(tokens):
                    raise DataError(f"{split} record {sentence_id}: {len(tags)} SRL tags for {len(tokens)} words")
                verbs = [s for s in bio_to_spans(tags) if s[0] == "V"]
                if not verbs:
                    raise DataError(f"{split} record {sentence_id}: srl frame for {frame['verb']!r} has no B-V tag")
                pred = verbs[0][1]
                examples.append({
                    "id": f"{sentence_id}:{pred}", "tokens": tokens, "predicate_index": pred,
                    "predicate_lemma": lemmas[pred] or frame["verb"],
                    "tags": spans_to_bio(bio_to_spans(tags), len(tokens)),
                    "sentence_id": sentence_id, "sentence_index": sent_index,
                })
            sent_index += 1
    return examples


def read_split(data_cfg: Mapping[str, Any], split: str) -> list[Example]:
    """Read one split named in a data config (see tasks/srl/conf/data/conll2005.yaml and conll2012_srl.yaml)."""
    options = data_options(SrlFiles, data_cfg)

    def read_local(where: str, _: str) -> list[Example]:
        if options.format == "conll2012":
            return read_conll2012_srl(where)
        return read_conll05_split(where, options.words_glob, options.props_glob)

    return shared_read_split(data_cfg, split, read_local, hub_records_to_examples)
