"""CoNLL-2012 coreference files (OntoNotes or LitBank) and the hub's ``coref_spans`` → one example per document.

Example::

    {"id": "NAME;PART", "doc_name": str, "part": int, "tokens": list[str] (flattened document),
     "sentence_ids": list[int] (per token), "speakers": list[str] | None, "genre": str | None,
     "clusters": list[list[tuple[int, int]]] (inclusive token spans), "path": str}

The last column's brackets are read as the reference scorer v8.01 reads them: per cell, first the one-token
mentions ``(12)``, then the openings ``(12``, then the closings ``12)``, each closing the latest open mention of
its entity; entities and mentions are ordered by first appearance. Sentences are separated by blank lines.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from elmo_bench.base.errors import DataError
from elmo_bench.data.splits import read_split as shared_read_split
from elmo_bench.data.textio import open_text, read_text

#: one document (or sentence) of the readers below: its fields by name
Example = dict[str, Any]

Cluster = list[tuple[int, int]]

_BEGIN = re.compile(r"^#\s*begin document (.*?)\s*$")
_NAME_PART = re.compile(r"^\((.*)\);\s*part\s+(\d+)$")
_PIECE = re.compile(r"^(\(\d+\)|\(\d+|\d+\))$")
_EMPTY = {"", "-", "_"}
_PLACEHOLDER = {"", "-", "_"}
GENRES = ("bc", "bn", "mz", "nw", "pt", "tc", "wb")


def split_row(line: str) -> list[str]:
    """Columns of a token row: tab-separated when the row has tabs (a trailing tab leaves an empty last column,
    as in LitBank), otherwise whitespace-separated."""
    line = line.rstrip("\r\n")
    return line.split("\t") if "\t" in line else line.split()


def parse_coref_cell(cell: str, where: str) -> list[tuple[str, int]]:
    """Cell → events [("single"|"open"|"close", entity)] in the scorer's order: singles, opens, closes."""
    cell = cell.strip()
    if cell in _EMPTY:
        return []
    events: dict[str, list[int]] = {"single": [], "open": [], "close": []}
    for piece in cell.split("|"):
        if re.fullmatch(r"\(\d+\+\d+\)", piece):  # double antecedent: the scorer discards it
            continue
        if not _PIECE.match(piece):
            raise DataError(f"{where}: bad coreference cell {cell!r}; expected pieces like '(12', '12)', '(12)' "
                            f"joined by '|', or '-'")
        if piece.startswith("(") and piece.endswith(")"):
            events["single"].append(int(piece[1:-1]))
        elif piece.startswith("("):
            events["open"].append(int(piece[1:]))
        else:
            events["close"].append(int(piece[:-1]))
    return [(kind, e) for kind in ("single", "open", "close") for e in events[kind]]


def _new_document(full: str, path: Path) -> Example:
    """An empty document for ``#begin document (NAME); part P`` (``full`` = the text in parentheses and after)."""
    np_ = _NAME_PART.match(full)
    name, part = (np_.group(1), int(np_.group(2))) if np_ else (full, 0)
    return {"id": f"{name};{part}", "doc_name": name, "part": part, "tokens": [], "sentence_ids": [],
            "speakers": [], "genre": name.split("/")[0] if name.split("/")[0] in GENRES else None,
            "clusters": [], "path": str(path)}


def _add_mentions(doc: Example, cells: Iterable[tuple[str, int]], entity_index: dict[int, int],
                  open_starts: dict[int, list[tuple[int, int]]], t: int, lineno: int, where: str) -> None:
    """Token ``t``'s coreference cell: single-token mentions join their cluster, opened ones wait on
    ``open_starts`` (with their line) until the closing cell, which pairs with the latest open of its entity."""
    for kind, ent in cells:
        idx = entity_index.setdefault(ent, len(entity_index))
        while len(doc["clusters"]) <= idx:
            doc["clusters"].append([])
        if kind == "single":
            doc["clusters"][idx].append((t, t))
        elif kind == "open":
            open_starts.setdefault(ent, []).append((t, lineno))
        else:
            if not open_starts.get(ent):
                raise DataError(f"{where}: closing '{ent})' without an open mention of entity {ent}")
            start, _ = open_starts[ent].pop()
            doc["clusters"][idx].append((start, t))


def iter_documents(path: str | Path) -> Iterator[Example]:
    """Yield every document of one CoNLL-2012 file, raising DataError with file and line on malformed input."""
    path = Path(path)
    doc: Example | None = None
    entity_index: dict[int, int] = {}
    open_starts: dict[int, list[tuple[int, int]]] = {}
    sentence = 0
    in_sentence = False
    with open_text(path) as handle:
        for lineno, line in enumerate(handle, 1):
            where = f"{path}:{lineno}"
            stripped = line.strip()
            m = _BEGIN.match(stripped)
            if m:
                if doc is not None:
                    raise DataError(f"{where}: '#begin document' inside document {doc['id']} (missing '#end document')")
                doc = _new_document(m.group(1), path)
                entity_index, open_starts, sentence, in_sentence = {}, {}, 0, False
                continue
            if stripped.startswith("#") and re.match(r"^#\s*end document", stripped):
                if doc is None:
                    raise DataError(f"{where}: '#end document' without '#begin document'")
                for ent, starts in open_starts.items():
                    if starts:
                        raise DataError(f"{path}:{starts[-1][1]}: mention of entity {ent} opened here is never "
                                        f"closed before '#end document' (line {lineno})")
                yield _finish(doc)
                doc = None
                continue
            if not stripped:
                if in_sentence:
                    sentence += 1
                in_sentence = False
                continue
            if doc is None:
                raise DataError(f"{where}: token row outside '#begin document' … '#end document'")
            cols = split_row(line)
            if len(cols) < 5:
                raise DataError(f"{where}: expected at least 5 columns (word in column 4, coreference last), "
                                f"got {len(cols)}")
            t = len(doc["tokens"])
            doc["tokens"].append(cols[3])
            doc["sentence_ids"].append(sentence)
            doc["speakers"].append(cols[9] if len(cols) >= 12 else "_")
            in_sentence = True
            _add_mentions(doc, parse_coref_cell(cols[-1], where), entity_index, open_starts, t, lineno, where)
    if doc is not None:
        raise DataError(f"{path}: document {doc['id']} has no '#end document' before end of file")


def _finish(doc: Example) -> Example:
    if all(s in _PLACEHOLDER for s in doc["speakers"]):
        doc["speakers"] = None
    doc["clusters"] = [c for c in doc["clusters"] if c]
    return doc


def read_conll_files(paths: list[Path]) -> list[Example]:
    return [doc for p in paths for doc in iter_documents(p)]


def _ids_to_paths(ids_file: Path, conll_dir: Path | None) -> list[Path]:
    """LitBank split list: lines like ``X_brat.tsv`` → ``<conll_dir>/X_brat.conll`` (default conll_dir: the
    ``conll`` folder next to ``litbank_tenfold_splits``)."""
    conll_dir = conll_dir or ids_file.parents[2] / "conll"
    out = []
    for lineno, line in enumerate(read_text(ids_file).splitlines(), 1):
        name = line.strip()
        if not name:
            continue
        if not name.endswith(".tsv"):
            raise DataError(f"{ids_file}:{lineno}: expected a document id ending in .tsv, got {name!r}")
        path = conll_dir / (name[: -len(".tsv")] + ".conll")
        if not path.exists():
            raise DataError(f"{ids_file}:{lineno}: {path} does not exist")
        out.append(path)
    return out


def read_path(value: str | Path, conll_dir: str | Path | None = None) -> list[Example]:
    """A split value: a LitBank ``.ids`` list, one CoNLL file, or a directory of ``*conll`` files."""
    value = Path(value)
    if value.suffix == ".ids":
        return read_conll_files(_ids_to_paths(value, Path(conll_dir) if conll_dir else None))
    if value.is_dir():
        files = sorted(p for p in value.rglob("*") if p.is_file() and p.name.endswith("conll"))
        if not files:
            raise DataError(f"{value}: no *conll files found")
        return read_conll_files(files)
    return read_conll_files([value])


def litbank_eval_documents(root: str | Path, fold: int) -> list[str]:
    """Names (e.g. ``1023_bleak_house_brat``) of the dev and test documents of one LitBank fold, so biLM
    pretraining can leave those Gutenberg books out."""
    split_dir = Path(root) / "litbank_tenfold_splits" / str(fold)
    names = []
    for split in ("dev", "test"):
        ids = split_dir / f"{split}.ids"
        if not ids.exists():
            raise DataError(f"{ids}: LitBank split list not found (fold {fold})")
        names += [line.strip()[: -len(".tsv")] for line in read_text(ids).splitlines()
                  if line.strip()]
    return names


def hub_records_to_examples(records: Iterable[Mapping[str, Any]], split: str) -> list[Example]:
    """Documents of the hub dataset ``conll2012_ontonotesv5``, one example per document part like ``read_path``.

    A hub record is one ``*gold_conll`` file: ``document_id`` plus ``sentences[*]`` with ``part_id`` (the file's
    part number, column 2), ``words``, ``speaker`` (None where the file has ``-``) and ``coref_spans`` =
    [cluster id, start, end] (inclusive, sentence-relative; a set in the hub, so in no particular order).
    Consecutive sentences of one part form one example; cluster ids are per part, as the scorer reads them.
    Mentions and clusters are put in file order (by start, then end), so the example does not depend on the
    hub's set order; the clusters equal the file reader's as sets of mentions.
    """
    out = []
    for doc in records:
        name = str(doc["document_id"])
        parts: list[tuple[int, list[Mapping[str, Any]]]] = []
        for sent in doc["sentences"]:
            part = int(sent.get("part_id") or 0)
            if not parts or parts[-1][0] != part:
                parts.append((part, []))
            parts[-1][1].append(sent)
        for part, sentences in parts:
            tokens, sent_ids, speakers = [], [], []
            clusters: dict[int, Cluster] = {}
            for s_no, sent in enumerate(sentences):
                offset = len(tokens)
                words = list(sent["words"])
                tokens += words
                sent_ids += [s_no] * len(words)
                speakers += [str(sent.get("speaker") or "-")] * len(words)
                for cid, start, end in sent.get("coref_spans") or []:
                    if not 0 <= start <= end < len(words):
                        raise DataError(f"{split} record {name} part {part} sentence {s_no}: coref span "
                                        f"({start}, {end}) outside {len(words)} words")
                    clusters.setdefault(int(cid), []).append((offset + start, offset + end))
            ordered = sorted((sorted(set(c)) for c in clusters.values()), key=lambda c: c[0])
            ex = {"id": f"{name};{part}", "doc_name": name, "part": part, "tokens": tokens, "sentence_ids": sent_ids,
                  "speakers": speakers, "genre": name.split("/")[0] if name.split("/")[0] in GENRES else None,
                  "clusters": ordered, "path": f"hub:{split}"}
            out.append(_finish(ex))
    return out


def read_split(data_cfg: Mapping[str, Any], split: str) -> list[Example]:
    """One split of a data config (tasks/coref/conf/data/litbank.yaml, conll2012_coref.yaml)."""
    return shared_read_split(data_cfg, split, lambda path, _: read_path(path, data_cfg.get("conll_dir")),
                             hub_records_to_examples)
