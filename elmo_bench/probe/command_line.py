"""The command-line flags of a probe, generated from its settings dataclass (issue 55 item 3): one flag per field,
``--<field>`` (a legacy spelling where the probe's ProbeCommand says so), its type, choices and range from the
field (elmo_bench.base.ranges, elmo_bench.probe.settings.choice), its help from the field's comment, its default
from the dataclass only: a flag not given sets nothing, so the probe runs with the default it declares, exactly as
``python run.py probe=NAME`` does. Given flags become ``probe.<field>=<value>`` overrides.

- a bool defaulting to false: ``--<field>`` sets it true; defaulting to true: ``--no-<field>`` sets it false;
- a list: one comma-separated value (``--seeds 1,2``, ``--l2-grid 1e-2,1e-3``);
- a nullable setting with a default: ``--no-<field>`` sets it null (``--no-wordnet``);
- anything else: one value, checked against its type and range when parsed.

Torch-free and naming no probe: ``elmo-bench probe NAME`` and each probe's own command (elmo_bench.commands.
probe_command) build their parsers from this.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import io
import logging
import re
import textwrap
import tokenize
import typing
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.overrides import quoted
from elmo_bench.base.ranges import Range, default_of
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.registry import registered_probes

log = logging.getLogger(__name__)
#: a comment line that continues the comment of the field above it (``#`` then an indented text)
CONTINUED = re.compile(r"#\s{8,}\S")
#: the ``argparse`` kinds of flag (see the module docstring)
VALUE, LIST, TRUE, FALSE, NULL = "value", "list", "true", "false", "null"


@dataclass(frozen=True)
class SettingFlag:
    """One flag of a probe setting: how it reads and what override it becomes."""

    setting: str
    flag: str
    kind: str
    cast: Callable[[str], Any] = str
    choices: tuple[str, ...] | None = None
    rule: Range | None = None
    help: str = ""


def listed(text: str | None, flag: str, cast: Callable[[str], Any] = str) -> str | None:
    """A comma list flag (``--seeds 1,2``) as a Hydra list (``[1,2]``); one line for a value ``cast`` refuses."""
    if text is None:
        return None
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise ConfigError(f"{flag} expected a comma-separated list, found {text!r} (empty)")
    try:
        values = [cast(t) for t in items]
    except ValueError:
        raise ConfigError(f"{flag} expected comma-separated {cast.__name__} values, found {text!r}") from None
    return "[" + ",".join(quoted(v) if cast is str else repr(v) for v in values) + "]"


def field_comments(cls: type) -> dict[str, str]:
    """Field → its comment in the source (the ``# ...`` after it, and indented comment lines continuing it), for
    ``cls`` and the dataclasses it extends (a field redefined without a comment keeps its base's)."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if "__dataclass_fields__" not in vars(klass):
            continue
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):  # no source (a compiled plug-in): flags without help text
            continue
        found.update({k: v for k, v in _comments_of(textwrap.dedent(source)).items() if v})
    return found


def _comments_of(source: str) -> dict[str, str]:
    """The comment of every annotated field of the first class in ``source``."""
    comments: dict[int, str] = {}
    code: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            code.update(range(token.start[0], token.end[0] + 1))
    only = set(comments) - code
    body = next(node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)).body
    out: dict[str, str] = {}
    for node in body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        end = node.end_lineno or node.lineno
        parts = [comments[n] for n in range(node.lineno, end + 1) if n in comments and n not in only]
        line = end + 1
        while parts and line in only and CONTINUED.match(comments[line]):
            parts.append(comments[line])
            line += 1
        out[node.target.id] = " ".join(p.lstrip("#").strip() for p in parts)
    return out


def _value_type(hint: Any) -> tuple[Any, bool]:
    """A field's type without ``| None``, and whether it is nullable."""
    args = typing.get_args(hint)
    if type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return (rest[0] if len(rest) == 1 else str), True
    return hint, False


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return "null" if value is None else str(value)


def setting_flags(settings: type, spelled: Mapping[str, str | None] | None = None) -> list[SettingFlag]:
    """The flags of every field of ``settings`` (``spelled``: field → its flag where not ``--<field>``, None:
    left out), in field order; a nullable field with a default also gets ``--no-<field>``."""
    hints = typing.get_type_hints(settings)
    comments = field_comments(settings)
    out: list[SettingFlag] = []
    for spec in fields(settings):
        flag = (spelled or {}).get(spec.name, "--" + spec.name.replace("_", "-"))
        if flag is None:
            continue
        kind, nullable = _value_type(hints[spec.name])
        default, comment = default_of(spec), comments.get(spec.name, "")
        rule = spec.metadata.get("range")
        if kind is bool:
            on = not default
            out.append(SettingFlag(spec.name, flag if on else "--no-" + flag[2:], TRUE if on else FALSE,
                                   help=_switch(spec.name, comment, on, default)))
            continue
        element = typing.get_args(kind)[0] if typing.get_origin(kind) is list else None
        if "dataset" in spec.metadata:
            comment += f"{'; ' if comment else ''}null: <paths.data_root>/{spec.metadata['dataset']}"
        out.append(SettingFlag(spec.name, flag, LIST if element else VALUE, element or kind,
                               spec.metadata.get("choices"), rule, _help(spec.name, comment, default, rule)))
        if nullable and default is not None:
            out.append(SettingFlag(spec.name, "--no-" + flag[2:], NULL, help=_switch(spec.name, "", None, default)))
    return out


def _help(name: str, comment: str, default: Any, rule: Range | None = None) -> str:
    """``probe.<name>: <comment> (default ...; the range)``, ``%`` escaped for argparse."""
    notes = [f"default {_shown(default)}"] if default is not None else []
    if rule is not None:
        notes.append(rule.expected())
    text = f"probe.{name}" + (f": {comment}" if comment else "") + (f" ({'; '.join(notes)})" if notes else "")
    return text.replace("%", "%%")


def _switch(name: str, comment: str, value: bool | None, default: Any) -> str:
    """A flag that sets one value: ``probe.<name>=<value>: <comment> (default ...)``."""
    text = f"probe.{name}={_shown(value)}" + (f": {comment}" if comment else "") + f" (default {_shown(default)})"
    return text.replace("%", "%%")


def _argument_type(flag: SettingFlag) -> Callable[[str], Any]:
    """argparse's type for a one-value flag: the field's type, within its range (one usage line otherwise)."""
    def parse(text: str) -> Any:
        try:
            value = flag.cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {flag.cast.__name__}, found {text!r}") from None
        if flag.rule is not None:
            try:
                flag.rule.check(flag.flag, value)
            except ConfigError:
                raise argparse.ArgumentTypeError(f"expected {flag.rule.expected()}, found {text}") from None
        return value

    parse.__name__ = flag.cast.__name__
    return parse


def add_setting_flags(parser: argparse.ArgumentParser, flags: Sequence[SettingFlag]) -> None:
    """``flags`` on ``parser``; none has a default in the namespace (given flags only, :func:`setting_overrides`)."""
    for flag in flags:
        common = {"dest": flag.setting, "default": argparse.SUPPRESS, "help": flag.help}
        if flag.kind in (TRUE, FALSE, NULL):
            const = {TRUE: True, FALSE: False, NULL: None}[flag.kind]
            parser.add_argument(flag.flag, action="store_const", const=const, **common)
        elif flag.kind == LIST:
            parser.add_argument(flag.flag, metavar="A,B,...", **common)
        else:
            parser.add_argument(flag.flag, type=_argument_type(flag), choices=flag.choices, **common,
                                metavar=None if flag.choices else flag.flag[2:].upper().replace("-", "_"))


def setting_overrides(flags: Sequence[SettingFlag], args: argparse.Namespace) -> list[str]:
    """The ``probe.<field>=<value>`` overrides of the flags given in ``args`` (in flag order)."""
    out: list[str] = []
    done: set[str] = set()
    for flag in flags:
        if flag.setting in done or not hasattr(args, flag.setting):
            continue
        done.add(flag.setting)
        value = getattr(args, flag.setting)
        if value is None or isinstance(value, bool):
            text = _shown(value)
        elif flag.kind == LIST:
            text = listed(value, _flag_named(flags, flag.setting), flag.cast)
        else:
            text = quoted(value) if flag.cast is str else repr(value)
        out.append(f"probe.{flag.setting}={text}")
    return out


def _flag_named(flags: Sequence[SettingFlag], setting: str) -> str:
    return next(f.flag for f in flags if f.setting == setting and f.kind in (VALUE, LIST))


def probe_commands() -> dict[str, ProbeDeclaration]:
    """Command name (``probe-pos``) → the declaration of the probe it runs, for every probe whose declaration
    names its own command (elmo_bench.probe.declaration.ProbeCommand): found, not listed."""
    found: dict[str, ProbeDeclaration] = {}
    for declared in registered_probes().values():
        if declared.command is None:
            continue
        before = found.setdefault(declared.command.name, declared)
        if before is not declared:
            log.warning("probe %s's command %r is skipped: probe %s declares it too", declared.name,
                        declared.command.name, before.name)
    return found


def flag_names(flags: Sequence[SettingFlag]) -> dict[str, str]:
    """``probe.<field>`` → the flag that sets it (an error naming the key names the flag the user typed)."""
    return {f"probe.{f.setting}": f.flag for f in flags if f.kind in (VALUE, LIST, TRUE, FALSE)}
