"""WordNet 3.0 from a database directory (Debian's ``wordnet-base``: ``/usr/share/wordnet``) through nltk's reader.

Never a download. nltk's ``WordNetCorpusReader`` needs two things the Debian files do not give it: a ``lexnames``
file (the 45-row table of ``man 5 lexnames``, written here from :data:`LEXNAMES`) and, since nltk 3.9, a root
under one of ``nltk.data.path``'s directories. So the database files are copied once into
``<work>/corpora/wordnet/`` (about 30 MB), ``lexnames`` is written beside them and ``<work>`` is put on
``nltk.data.path``. ``index.sense`` (Debian's ``wordnet-sense-index``) is copied when present; without it an empty
one is written: nltk opens it on construction (to map sense keys between WordNet versions), and the probe never
looks a sense key up, it only builds keys from synsets.
"""
from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any, Callable, Optional

from elmo_bench.base.atomic import atomic_path, atomic_write_text
from elmo_bench.base.errors import DataError

log = logging.getLogger(__name__)
DEFAULT_SOURCE = Path("/usr/share/wordnet")
INSTALL_HINT = "install WordNet 3.0 with: apt-get update && apt-get install -y wordnet-base"
POS_FILES = ("noun", "verb", "adj", "adv")
REQUIRED = tuple(f"{kind}.{pos}" for kind in ("data", "index") for pos in POS_FILES)
OPTIONAL = tuple(f"{pos}.exc" for pos in POS_FILES) + ("index.sense",)

#: WordNet's lexicographer files in file-number order (``man 5 lexnames``): name, syntactic category
#: (1 noun, 2 verb, 3 adjective, 4 adverb)
LEXNAMES: tuple[tuple[str, int], ...] = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1), ("noun.animal", 1),
    ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1), ("noun.cognition", 1),
    ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1), ("noun.food", 1), ("noun.group", 1),
    ("noun.location", 1), ("noun.motive", 1), ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1),
    ("noun.plant", 1), ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1), ("verb.body", 2),
    ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2), ("verb.competition", 2),
    ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2),
    ("verb.perception", 2), ("verb.possession", 2), ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2),
    ("adj.ppl", 3),
)


def lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{category}\n" for i, (name, category) in enumerate(LEXNAMES))


def _copy_if_changed(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` atomically unless a file of the same size and mtime is already there."""
    stat = source.stat()
    if target.exists() and target.stat().st_size == stat.st_size and int(target.stat().st_mtime) == int(stat.st_mtime):
        return
    with atomic_path(target) as tmp:
        shutil.copy2(source, tmp)


def _write_if_changed(target: Path, text: str) -> None:
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return
    atomic_write_text(target, text)


def prepare_root(source: str | Path, work: str | Path) -> Path:
    """Copy the WordNet database of ``source`` into ``work/corpora/wordnet`` (+ lexnames); return that directory."""
    source, work = Path(source), Path(work)
    missing = [name for name in REQUIRED if not (source / name).is_file()]
    if missing:
        raise DataError(f"{source}: not a WordNet 3.0 database directory (missing {', '.join(missing)}); "
                        f"{INSTALL_HINT}")
    root = work / "corpora" / "wordnet"
    root.mkdir(parents=True, exist_ok=True)
    for name in REQUIRED + OPTIONAL:
        if (source / name).is_file():
            _copy_if_changed(source / name, root / name)
        elif name.endswith(".exc"):
            _write_if_changed(root / name, "")          # no exceptions of that part of speech
    if not (source / "index.sense").is_file():
        log.info("%s has no index.sense (Debian package wordnet-sense-index): nltk gets an empty one", source)
        _write_if_changed(root / "index.sense", "")
    _write_if_changed(root / "lexnames", lexnames_text())
    return root


def open_wordnet(source: str | Path = DEFAULT_SOURCE, work: str | Path = ".cache/nltk_data") -> Any:
    """nltk's ``WordNetCorpusReader`` on the database in ``source`` (prepared under ``work``); DataError if absent."""
    try:
        import nltk
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        raise DataError("the WordNet reader needs nltk (pip install nltk)") from None
    root = prepare_root(source, work)
    data_dir = str(Path(work).resolve())
    if data_dir not in nltk.data.path:
        nltk.data.path.insert(0, data_dir)
    import warnings

    with warnings.catch_warnings():      # "multilingual functions are not available": no OMW, by design
        warnings.simplefilter("ignore", UserWarning)
        return WordNetCorpusReader(str(root.resolve()), None)


def first_sense(wordnet: Any) -> Callable[[str, str], Optional[str]]:
    """(lemma, pos n|v|a|r) → the sense key of the lemma in its first (most frequent) synset, or None.

    WordNet orders a lemma's synsets by their SemCor tag counts, so this is the paper's "WordNet first sense"."""

    def lookup(lemma: str, pos: str) -> Optional[str]:
        wanted = lemma.lower()
        try:
            synsets = wordnet.synsets(wanted, pos=pos)
        except KeyError:                                  # an unknown part of speech
            return None
        for synset in synsets:
            for name in synset.lemmas():
                if name.name().lower() == wanted:
                    return name.key()
        return None

    return lookup
