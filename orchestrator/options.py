"""Parsing of plugin options, which may arrive as command-line strings."""

from __future__ import annotations

import inspect
import json
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from orchestrator.errors import OptionError

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def owner_name(kind: str, name: str) -> str:
    """How option errors name a component: its kind in words and its quoted name, as in
    ``searcher 'gga'`` or ``cost model 'xgb'`` (``kind`` as the registry spells it:
    ``cost_model`` or ``cost model``)."""
    return f"{kind.replace('_', ' ')} {name!r}"


def as_bool(owner: str, name: str, value: Any) -> bool:
    """An on/off option of ``owner`` (a plugin's name): a bool, or true/false, 1/0,
    yes/no, on/off as text; a one-line error for anything else."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise OptionError(f"{owner}: option {name} must be true or false, got {value!r}")


# Annotations (as text, under ``from __future__ import annotations``, or as objects) that
# options are converted to; anything else reaches the component as given.
_KINDS = {"int": "a whole number", "float": "a number", "bool": "true or false",
          "str": "text", "Path": "text"}


def _annotation_parts(annotation: Any) -> set[str]:
    """The names an annotation unites: ``"int | None"`` as text (under ``from __future__
    import annotations``), or as objects (``int``, ``int | None``, ``Optional[int]``,
    ``Union[str, Path]``) from a plugin that evaluates its annotations."""
    if isinstance(annotation, str):
        return {part.strip() for part in annotation.split("|")}
    if annotation is None or annotation is type(None):
        return {"None"}
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(_annotation_parts(arg) for arg in typing.get_args(annotation)))
    if isinstance(annotation, type):
        return {annotation.__name__}
    return {str(annotation)}  # a generic such as list[int]: no kind of ours


def _annotation_kind(annotation: Any) -> tuple[str | None, bool]:
    """The base kind of an annotation (``int``, ``float``, ``bool``, ``str``; None for any
    other) and whether it admits None."""
    parts = _annotation_parts(annotation)
    nullable = "None" in parts
    parts.discard("None")
    if parts and parts <= {"str", "Path"}:
        return "str", nullable
    if len(parts) == 1 and (only := next(iter(parts))) in _KINDS:
        return only, nullable
    return None, nullable


def _parameters(factory: Callable[..., Any]) -> tuple[dict[str, inspect.Parameter], bool] | None:
    """The parameters ``factory`` takes by name, and whether it takes ``**kwargs`` too; None
    when it has no signature to read."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return None
    named = {n: p for n, p in params.items()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return named, any(p.kind is p.VAR_KEYWORD for p in params.values())


def option_names(factory: Callable[..., Any]) -> list[str]:
    """The options ``factory`` takes by name, in its signature's order (not those it
    takes by ``**kwargs``); for a component that checks its ``**kwargs`` itself."""
    found = _parameters(factory)
    return list(found[0]) if found else []


def _convert(owner: str, name: str, kind: str, value: Any) -> Any:
    if kind == "bool":
        return as_bool(owner, name, value)
    if kind == "str":
        if isinstance(value, (str, os.PathLike)):
            return value  # a Path stays a Path
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    elif isinstance(value, bool):
        pass
    elif kind == "int":
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
    elif kind == "float":
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
    raise OptionError(f"{owner}: option {name} takes {_KINDS[kind]}, got {value!r}")


def coerce_options(owner: str, factory: Callable[..., Any], options: Mapping[str, Any],
                   *, also: Iterable[str] = ()) -> dict[str, Any]:
    """``options`` as ``factory`` takes them: each converted to the type its parameter is
    annotated with (``int``, ``float``, ``bool``, ``str``, optionally ``| None``), so that
    text from the command line works and a wrong value is a one-line :class:`OptionError`
    naming the option rather than a traceback from inside the component. A name the factory
    does not take is an error listing those it does, unless it takes ``**kwargs`` (then it
    checks them itself). ``also`` names more options to list (those a ``**kwargs`` factory
    passes on). Called by the registries before every component is made."""
    found = _parameters(factory)
    if found is None:  # a builtin or C callable: nothing to check against
        return dict(options)
    named, open_ended = found
    out: dict[str, Any] = {}
    for name, value in options.items():
        par = named.get(name)
        if par is None:
            if open_ended:
                out[name] = value
                continue
            raise unknown_option(owner, name, {*named, *also})
        kind, nullable = _annotation_kind(par.annotation)
        if kind is None or (value is None and nullable):
            out[name] = value
        else:
            out[name] = _convert(owner, name, kind, value)
    return out


def unknown_option(owner: str, name: str, known: Iterable[str]) -> OptionError:
    """The one-line error for an option ``owner`` does not take, listing those it does."""
    return unknown_options(owner, [name], known)


def unknown_options(owner: str, names: Iterable[str], known: Iterable[str]) -> OptionError:
    """The one-line error for options ``owner`` does not take (one or more, as a
    ``**kwargs`` component finds them), listing those it does."""
    given = sorted(names)
    listed = sorted(known)
    return OptionError(f"{owner}: unknown option{'s' if len(given) > 1 else ''} "
                       f"{', '.join(map(repr, given))}; "
                       + (f"known: {', '.join(listed)}" if listed else "it takes no options"))


def at_least(owner: str, name: str, value: float, low: float, *,
             low_open: bool = False) -> None:
    """A one-line :class:`OptionError` unless ``value >= low`` (``value > low`` with
    ``low_open``; NaN fails)."""
    if not (value > low if low_open else value >= low):
        raise OptionError(f"{owner}: option {name} must be {'>' if low_open else '>='} "
                          f"{low}, got {value}")


def within(owner: str, name: str, value: float, low: float, high: float, *,
           low_open: bool = False) -> None:
    """A one-line :class:`OptionError` unless ``low <= value <= high`` (``low < value``
    with ``low_open``; NaN fails)."""
    if not (low < value if low_open else low <= value) or not value <= high:
        raise OptionError(f"{owner}: option {name} must be within "
                          f"{'(' if low_open else '['}{low}, {high}], got {value}")


def whole(owner: str, name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` as a whole number of at least ``low`` (and at most ``high``): an int, an
    integral float, or an int's text as from the command line; a one-line
    :class:`OptionError` for anything else (a bool, "2.0" as text)."""
    return _bounded(owner, name, _convert(owner, name, "int", value), low, high)


def number(owner: str, name: str, value: Any, low: float, high: float | None = None, *,
           low_open: bool = False) -> float:
    """``value`` as a float of at least ``low`` (above it with ``low_open``) and at most
    ``high``; text converts, a bool or anything else is a one-line :class:`OptionError`."""
    return _bounded(owner, name, _convert(owner, name, "float", value), low, high, low_open)


def _bounded(owner: str, name: str, value: Any, low: float, high: float | None,
             low_open: bool = False) -> Any:
    if high is None:
        at_least(owner, name, value, low, low_open=low_open)
    else:
        within(owner, name, value, low, high, low_open=low_open)
    return value


def one_of(owner: str, name: str, value: Any, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices``, else a one-line :class:`OptionError` listing
    them."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise OptionError(f"{owner}: option {name} must be one of {', '.join(choices)}, "
                          f"got {value!r}")
    return value


def describe_options(factory: Callable[..., Any]) -> tuple[list[tuple[str, str, str]], bool]:
    """The options ``factory`` takes, as (name, what it takes, default) rows, and whether it
    takes more by ``**kwargs`` (checked by the component itself); for ``orchestrator
    plugins --show``."""
    found = _parameters(factory)
    if found is None:
        return [], True
    named, open_ended = found
    rows = []
    for name, par in named.items():
        kind, nullable = _annotation_kind(par.annotation)
        takes = _KINDS[kind] if kind else "see the description"
        if nullable and kind:
            takes += " or null"
        default = "(required)" if par.default is par.empty else _as_json(par.default)
        rows.append((name, takes, default))
    return rows, open_ended


def _as_json(value: Any) -> str:
    """A default as it would be written on the command line (JSON), else its repr."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
