"""Target options from the command line: ``--name VALUE`` pairs, typed by annotation or by default value."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from synchunt.errors import UsageError

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def parse_extra_options(args: list[str]) -> dict[str, str]:
    """``["--dcp-size", "4", "--impl=sliced"]`` → ``{"dcp-size": "4", "impl": "sliced"}``."""
    options: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--") or len(arg) == 2:
            raise UsageError(f"unexpected argument {arg!r}; target options look like --name VALUE")
        name, eq, value = arg[2:].partition("=")
        if not eq:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise UsageError(f"option --{name} needs a value")
            value = args[i + 1]
            i += 1
        options[name] = value
        i += 1
    return options


def convert(raw: str, kind: Any, option: str) -> Any:
    """``raw`` as ``kind`` (bool, int, float; anything else stays a string); a bad value is a UsageError."""
    try:
        if kind is bool:
            lowered = raw.lower()
            if lowered not in _TRUE + _FALSE:
                raise ValueError(raw)
            return lowered in _TRUE
        if kind in (int, float):
            return kind(raw)
    except ValueError:
        raise UsageError(f"{option}: {raw!r} is not a valid {getattr(kind, '__name__', kind)}") from None
    return raw


def parameter_types(function: Callable[..., Any]) -> dict[str, Any]:
    """Each parameter's type: its annotation when it is a plain bool/int/float/str (``Optional[int]`` counts as
    int), else the type of its default (``n=64`` is an int), else str."""
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # annotations that cannot be evaluated: fall back to the defaults
        hints = {}
    types: dict[str, Any] = {}
    for name, parameter in inspect.signature(function).parameters.items():
        hint = _plain_type(hints.get(name))
        default = parameter.default
        if hint is None and default is not inspect.Parameter.empty and type(default) in (bool, int, float, str):
            hint = type(default)
        types[name] = hint or str
    return types


def _plain_type(hint: Any) -> Any:
    if hint in (bool, int, float, str):
        return hint
    arguments = [a for a in typing.get_args(hint) if a is not type(None)]
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and len(arguments) == 1
    if optional and arguments[0] in (bool, int, float, str):
        return arguments[0]
    return None


def bind_options(functions: Mapping[str, Callable[..., Any]], options: Mapping[str, str],
                 filled: Mapping[str, set[str]] | None = None) -> dict[str, dict[str, Any]]:
    """Keyword arguments for each function (by role, e.g. ``{"setup": f, "step": g}``) from ``options``.

    An option goes to every function that has a parameter of that name; one that none has is an error, and so is
    a required parameter left without a value (``filled`` names parameters the caller supplies itself).
    """
    filled = filled or {}
    kwargs: dict[str, dict[str, Any]] = {role: {} for role in functions}
    for option, raw in options.items():
        key = option.replace("-", "_")
        takers = [role for role, f in functions.items() if key in inspect.signature(f).parameters]
        if not takers:
            names = " or ".join(f"{f.__name__}()" for f in functions.values())
            known = sorted({p for f in functions.values() for p in inspect.signature(f).parameters})
            listing = ", ".join("--" + p.replace("_", "-") for p in known) or "none"
            raise UsageError(f"{names} has no parameter {key!r} (options: {listing})")
        for role in takers:
            kwargs[role][key] = convert(raw, parameter_types(functions[role]).get(key, str), f"--{option}")
    for role, function in functions.items():
        missing = [p.name for p in inspect.signature(function).parameters.values()
                   if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                   and p.name not in kwargs[role] and p.name not in filled.get(role, set())]
        if missing:
            raise UsageError(f"{function.__name__}() needs {', '.join('--' + m.replace('_', '-') for m in missing)}")
    return kwargs


def first_parameter(function: Callable[..., Any]) -> str | None:
    """The parameter a setup's return value is passed to: the step's first positional one."""
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            return parameter.name
    return None
