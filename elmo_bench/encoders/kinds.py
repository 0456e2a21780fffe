"""The encoder kinds, found rather than listed: every module or folder of this package that declares
``ENCODER_KIND = EncoderKind(name, build, ...)`` (bilm/, transformers/, hdf5.py, manylangs.py, python.py). A new kind
is a new module or folder with that block (docs/adding-an-encoder.md); ``encoder=<name>``, ``--encoder <name>``,
``plan``, the settings checks and the probes then reach it through the hooks it declares, and nothing outside it
names it (tests/plugin_names.py). Other distributions add kinds through the ``elmo_bench.encoders`` entry-point
group (``name = "pkg.module:ENCODER_KIND"``).

The scan is the one every plug-in point shares (elmo_bench.base.registry): a broken kind is skipped with one
warning line naming it, and asking for it by name is that line. Only the modules whose source assigns the
declaration are imported (each file's text is read first), so finding the kinds loads no other module of the
package.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Callable, Mapping

import elmo_bench.encoders as encoders_package
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.registry import PluginPoint, Registry, scan, sorted_by_name

#: the name of the declaration in an encoder module
DECLARATION = "ENCODER_KIND"
#: the entry-point group through which other distributions add encoder kinds
ENTRY_POINT_GROUP = "elmo_bench.encoders"


@dataclass(frozen=True)
class Erasure:
    """How a kind runs an eraser inside its forward pass (``encoder.erase``, elmo_bench.encoders.erasing).

    ``top(encoder)``: the highest layer it can erase; ``top_from_files(spec, bilm_options)``: the same read from
    small files without loading the model (None: not known there); ``widths(encoder, layer)``: each stream's width
    at ``layer``; ``install(encoder, eraser)``: the eraser put in the forward pass."""

    top: Callable[[Any], int]
    top_from_files: Callable[[Mapping[str, Any], str | None], int | None]
    widths: Callable[[Any, int], list[int]]
    install: Callable[[Any, Any], None]
    #: what follows the allowed range in the refusal's words (a transformer: its last layer feeds no block)
    note: str = ""
    #: the eraser runs per stream of a layer (the biLM's forward and backward halves): ``probe=erasure`` fits and
    #: saves one per stream (its ``streams``)
    per_stream: bool = False


@dataclass(frozen=True)
class EncoderKind:
    """One kind: ``name`` (the value of ``encoder.kind``) and ``build(spec, amp)`` → the Encoder from the encoder
    config group (None: built by ``load`` from its own group, as the biLM is from ``bilm``), and the hooks the rest
    of the project asks instead of naming kinds. Every hook but ``build`` is optional: a kind that declares only
    ``name`` and ``build`` runs, plans (cost: its layers and width, FLOPs unknown) and reports (label: its kind)."""

    name: str
    build: Callable[[Mapping[str, Any], Any], Any] | None
    #: the kind's version (issue 54): ``encoder.plugin: <name>@<version>`` in the identity of every run that uses
    #: its layers; bump it when a change may move a number, else record the new code hash in
    #: elmo_bench/identity/plugins.txt
    version: int = 1
    #: the ``encoder=<name>`` option's keys and defaults besides ``kind`` (a ConfigStore node made from them,
    #: elmo_bench.engine.config_schema; None: no option, a user's conf/encoder/<name>.yaml may give one)
    conf: Mapping[str, Any] | None = None
    #: the kind a config or record without ``encoder.kind`` means (exactly one kind: conf/config.yaml's default)
    default: bool = False
    #: how the kind is called in messages ("the biLM"); None: ``encoder=<name>``
    title: str | None = None
    #: what ``encoder.path`` must name, in words (None: the kind reads no path)
    path: str | None = None
    #: what it needs on disk, checked without loading (``plan``): ``check_path(spec)`` raises one ConfigError line
    check_path: Callable[[Mapping[str, Any]], None] | None = None
    #: its own settings check ``check(spec, prefix)`` (python: ``_target_``), after the common ones
    check: Callable[[Mapping[str, Any], str], None] | None = None
    #: every key besides kind, cache_dtype and erase is the user's (python: its class's arguments): no range checks
    free_keys: bool = False
    #: reads the large-model keys (``layers``, ``dtype``, ``max_tokens``; embed's and extract's flags of the same)
    model_keys: bool = False
    #: the random twins it can draw (elmo_bench.encoders.random_init) and ``randomise(encoder, mode, seed)``
    random_modes: tuple[str, ...] = ()
    randomise: Callable[[Any, str, int], Any] | None = None
    #: a trained one has its softmax, an LM head (elmo_bench.bilm.lm_head: probe=amnesic_lm scores words with it)
    lm_head: bool = False
    #: a model it loads may be a causal LM with its own final norm and ``lm_head`` (probe=lens reads each layer
    #: through them; a model without one is refused when it is loaded)
    causal_head: bool = False
    #: where a run asks for the random twin when not through ``encoder.random_init`` (the biLM: its own group)
    random_via: str | None = None
    #: running an eraser inside the forward pass (None: the kind's forward pass does not run here)
    erasure: Erasure | None = None
    #: ``price(spec, options, options_source, sentences, amp)`` → elmo_bench.encoders.costs.EncoderCost
    price: Callable[..., Any] | None = None
    #: the project's packages that are the kind's own code beyond its folder (the biLM kind: ``elmo_bench.bilm``,
    #: the model it loads); its code identity follows them too (elmo_bench.engine.plugin_code.ENCODER_CODE)
    packages: tuple[str, ...] = ()
    #: the config groups the kind reads besides ``encoder`` (the biLM: ``bilm``): left out of another kind's record
    groups: tuple[str, ...] = ()
    #: ``load(spec, files)`` → (encoder, the record results.json keeps under its group) when ``build`` is None
    load: Callable[[Mapping[str, Any], Any], tuple[Any, Any]] | None = None
    #: ``layer_ids(spec, files, quick)``: the model's layer indices read without building it (None: unknown; quick:
    #: small files only, no model library)
    layer_ids: Callable[[Mapping[str, Any], Any, bool], list[int] | None] | None = None
    #: the command line (elmo_bench.encoders.cli_options): ``--model`` goes to ``encoder.<model_key>``;
    #: ``cli_settings(args, layers)`` the kind's other flags as encoder settings; ``from_args(args, name)`` the
    #: encoder of a kind that takes no ``--model`` (the biLM: ``--options/--weights``), ``overrides(args)`` its
    #: run.py overrides
    model_key: str = "path"
    cli_settings: Callable[[Any, Any], dict[str, Any]] | None = None
    from_args: Callable[[Any, str | None], Any] | None = None
    overrides: Callable[[Any], list[str]] | None = None
    #: ``run_label(root)``: the encoder in a probe run's directory name (None: the kind and the model's name), and
    #: the override keys of its own groups that name left out (files, whose content the identity holds; the
    #: group's choice, in the label already)
    run_label: Callable[[Mapping[str, Any]], str] | None = None
    run_keys: tuple[str, ...] = ()
    #: a checkpoint series (a sweep over one model's checkpoints, elmo_bench.commands.checkpoint_series):
    #: ``checkpoint(root)`` the file or directory a run's weights are (None: ``encoder.path`` when it is local), and
    #: ``architecture(root)`` what every checkpoint of one series must share (name → value; None: not checked)
    checkpoint: Callable[[Mapping[str, Any]], str | None] | None = None
    architecture: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    #: ``label(identity)``: the report's name of an encoder of this kind, recorded with each run (results.json's
    #: ``encoder_label``); None: the report names it from its identity's fields (elmo_bench.report.encoder_names)
    label: Callable[[Mapping[str, Any]], str] | None = None


def need_path(spec: Mapping[str, Any]) -> str:
    """``encoder.path`` of a kind that reads files; one ConfigError line when it is absent."""
    path = spec.get("path")
    if not path:
        raise ConfigError(f"config: encoder={spec.get('kind')} needs encoder.path (found none)")
    return str(path)


def _declares(source: Path) -> bool:
    """Whether a module's source assigns the declaration at its top level: only those modules are imported."""
    return re.search(rf"^{DECLARATION} = ", source.read_text(encoding="utf-8"), re.MULTILINE) is not None


def plugin_point() -> PluginPoint[EncoderKind]:
    """Where encoder kinds live: each module (or folder) of this package declares its own, in itself."""
    return PluginPoint("encoder kind", encoders_package, DECLARATION, EncoderKind, ENTRY_POINT_GROUP, module=None,
                       declares=_declares)


@functools.cache
def encoder_kinds() -> Registry[EncoderKind]:
    """Kind name → its declaration, sorted by name: a module of this package, a folder whose ``__init__`` declares
    it, or an entry point (``problems``: the kinds skipped, each with its line)."""
    return sorted_by_name(scan(plugin_point(), entry_points(group=ENTRY_POINT_GROUP)))


def kind_problem(name: str) -> str | None:
    """Why kind ``name`` is not registered (it was skipped as broken), in one line; None otherwise."""
    return encoder_kinds().problems.get(name)


def default_kind() -> EncoderKind:
    """The kind that declares ``default``: what a config or record without ``encoder.kind`` means."""
    found = [kind for kind in encoder_kinds().values() if kind.default]
    if len(found) != 1:
        raise ConfigError(f"encoder kinds: expected exactly one to declare default=True, found "
                          f"{[kind.name for kind in found]}")
    return found[0]


def kind_of(spec: Mapping[str, Any] | None) -> EncoderKind:
    """The declaration of an encoder group's kind (the default kind when it names none); ConfigError (one line)
    for a kind nobody declares."""
    name = (spec or {}).get("kind")
    if not name:
        return default_kind()
    found = encoder_kinds().get(str(name))
    if found is None:
        raise ConfigError(f"config: encoder.kind expected one of {', '.join(encoder_kinds())}, found {name!r}")
    return found


def kind_groups() -> tuple[str, ...]:
    """Every config group a kind reads besides ``encoder`` (the biLM's ``bilm``), in kind order."""
    return tuple(group for kind in encoder_kinds().values() for group in kind.groups)


def option_node(kind: EncoderKind) -> dict[str, Any] | None:
    """The ``encoder=<name>`` option a kind declares (its ``conf`` after ``kind: <name>``), None without one."""
    return None if kind.conf is None else {"kind": kind.name, **kind.conf}


def label_record(identity: Mapping[str, Any] | None) -> dict[str, str]:
    """``{"encoder_label": ...}`` for results.json when the encoder's kind declares a label, else nothing (the
    report reads the label from the record: it imports no kind)."""
    kind = encoder_kinds().get(str((identity or {}).get("kind")))
    return {"encoder_label": kind.label(identity)} if identity and kind is not None and kind.label else {}


def title(kind: EncoderKind) -> str:
    """How messages call ``kind``."""
    return kind.title or f"encoder={kind.name}"


def encoder_plugin_of(spec: Mapping[str, Any] | None) -> str:
    """``<kind>@<version>`` of an encoder group (the default kind when it names none): the ``encoder.plugin`` key
    of the identity of every run that uses its layers."""
    kind = str((spec or {}).get("kind") or default_kind().name)
    found = encoder_kinds().get(kind)
    return f"{kind}@{found.version if found is not None else 1}"
