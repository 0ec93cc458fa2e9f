"""What to profile: a registered workload, ``package.module:function`` or ``path/to/file.py:function``."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import re
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synchunt.errors import TargetError, UsageError


@dataclass(frozen=True)
class Target:
    """A resolved target: ``setup()`` (not profiled) returns the state that ``step(state)`` runs on."""

    name: str
    label: str  # e.g. the variant ("masked") or "run"; used in the trace file name
    setup: Callable[[], Any]
    step: Callable[[Any], Any]
    thread_name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    device: str = "cpu"


def resolve_target(spec: str, options: Mapping[str, str] | None = None, *, small: bool = False) -> Target:
    """Resolve ``spec`` and apply ``options`` (``{"dcp-size": "4"}``: option names with dashes, string values)."""
    options = dict(options or {})
    if ":" not in spec:  # workload names never contain a colon
        return _workload_target(spec, options, small=small)
    module_part, _, function_name = spec.rpartition(":")
    if not module_part or not function_name.isidentifier():
        raise TargetError(f"bad target {spec!r}: expected a workload name, module:function or file.py:function")
    module = _load_module(module_part)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise TargetError(f"{module_part} has no function {function_name!r}")
    kwargs = _convert_kwargs(function, options)
    return Target(name=function_name, label="run", setup=lambda: None, step=lambda _state: function(**kwargs),
                  thread_name=function_name, params=kwargs, device=str(kwargs.get("device", "cpu")))


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


def _workload_target(name: str, options: dict[str, str], *, small: bool) -> Target:
    from workloads import all_workloads

    table = all_workloads()
    if name not in table:
        raise TargetError(f"unknown target {name!r}; registered workloads: {', '.join(sorted(table))} "
                          "(or give module:function / file.py:function)")
    workload = table[name]
    fields = {f.name: f for f in dataclasses.fields(workload.params)}
    hints = typing.get_type_hints(workload.params)
    values: dict[str, Any] = {}
    for option, raw in options.items():
        key = option.replace("-", "_")
        if key not in fields:
            known = ", ".join("--" + f.replace("_", "-") for f in fields)
            raise UsageError(f"workload {name!r} has no option --{option}; options: {known}")
        values[key] = _convert(raw, hints.get(key, str), f"--{option}")
    try:
        params = workload.make_params(values, small=small)
    except (TypeError, ValueError) as error:
        raise UsageError(f"workload {name!r}: {error}") from None
    param_dict = dataclasses.asdict(params)
    label = str(param_dict.get(workload.variant_field, "run"))
    return Target(name=name, label=label, setup=lambda: workload.setup(params), step=workload.step,
                  thread_name=workload.thread_name, params=param_dict, device=str(param_dict.get("device", "cpu")))


def _convert(raw: str, kind: Any, option: str) -> Any:
    try:
        if kind is bool:
            lowered = raw.lower()
            if lowered not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(raw)
            return lowered in ("1", "true", "yes", "on")
        if kind in (int, float):
            return kind(raw)
    except ValueError:
        raise UsageError(f"{option}: {raw!r} is not a valid {getattr(kind, '__name__', kind)}") from None
    return raw


def _convert_kwargs(function: Callable[..., Any], options: dict[str, str]) -> dict[str, Any]:
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # annotations that cannot be evaluated: treat values as strings
        hints = {}
    kwargs: dict[str, Any] = {}
    for option, raw in options.items():
        key = option.replace("-", "_")
        if key not in signature.parameters:
            raise UsageError(f"{function.__name__}() has no parameter {key!r}")
        kwargs[key] = _convert(raw, hints.get(key, str), f"--{option}")
    missing = [p.name for p in signature.parameters.values()
               if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               and p.name not in kwargs]
    if missing:
        raise UsageError(f"{function.__name__}() needs {', '.join('--' + m.replace('_', '-') for m in missing)}")
    return kwargs


def _load_module(module_part: str) -> Any:
    if module_part.endswith(".py") or "/" in module_part or "\\" in module_part:
        path = Path(module_part)
        if not path.is_file():
            raise TargetError(f"no such file: {path}")
        module_name = "synchunt_target_" + re.sub(r"\W", "_", path.stem)
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise TargetError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        # The file's folder first on sys.path, as `python file.py` would have it (and Kineto trims it off).
        sys.path.insert(0, str(path.resolve().parent))
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            raise TargetError(f"importing {path} failed: {type(error).__name__}: {error}") from None
        return module
    try:
        return importlib.import_module(module_part)
    except ImportError as error:
        raise TargetError(f"cannot import {module_part!r}: {error}") from None
