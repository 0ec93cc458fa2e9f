"""What to profile: a registered workload, ``package.module:function`` or ``path/to/file.py:function``.

A function target may have a set-up function (``setup``: ``module:function``, or a function name in the
target's module) that runs once, unprofiled; its return value is passed to the step's first parameter. Every
``--name VALUE`` option goes to the set-up and the step parameters of that name.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synchunt.capture.loading import LoadedModule, load_module
from synchunt.capture.options import bind_options, convert, first_parameter
from synchunt.capture.registry import registered_workloads, unknown_name_message
from synchunt.errors import TargetError, UsageError
from synchunt.source_map import find_project_root


@dataclass(frozen=True)
class Target:
    """A resolved target: ``setup()`` (not profiled) returns the state that ``step(state)`` runs on.

    ``device`` chooses what the profiler records (CPU, plus CUDA activities for ``cuda``/``cuda:N``).
    ``project_root`` is the folder the trace names the user's files relative to; ``user_packages`` are
    top-level packages that count as user code wherever they are installed (the target's own).
    """

    name: str
    label: str  # e.g. the variant ("masked"); "" for a function target
    setup: Callable[[], Any]
    step: Callable[[Any], Any]
    thread_name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    device: str = "cpu"  # or "shadow-cuda": the code runs with "cuda" under the shadow device, on the CPU
    project_root: str | None = None
    user_packages: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """``hicache-dcp masked``, ``myserve.sched:step``: what reports and file names call this run."""
        return f"{self.name} {self.label}" if self.label else self.name


def resolve_target(spec: str, options: Mapping[str, str] | None = None, *, small: bool = False,
                   setup: str | None = None, device: str | None = None,
                   project_root: str | os.PathLike[str] | None = None) -> Target:
    """Resolve ``spec`` and apply ``options`` (``{"dcp-size": "4"}``: option names with dashes, string values).

    ``device`` (default: the target's own ``device`` option or default, else ``"cpu"``) is what gets recorded;
    it is also passed to a target that has a ``device`` parameter or field and was not given one.
    """
    options = dict(options or {})
    # --device shadow-cuda: the target's code is given "cuda" and runs under the shadow device.
    shadow = (device if device is not None else options.get("device", "")).strip().lower() == SHADOW_DEVICE
    if shadow and device is not None:
        device = "cuda"
    elif shadow:
        options["device"] = "cuda"
    if ":" not in spec:  # workload names never contain a colon
        if setup is not None:
            raise UsageError("--setup is for module:function and file.py:function targets; a workload has its own")
        target = _workload_target(spec, options, small=small, device=device)
    else:
        target = _function_target(spec, options, setup=setup, device=device)
    if project_root is not None:
        root = Path(os.path.abspath(project_root))
        if not root.is_dir():
            raise UsageError(f"--project-root {project_root}: no such folder")
        target = dataclasses.replace(target, project_root=str(root))
    return dataclasses.replace(target, device=SHADOW_DEVICE) if shadow else target


SHADOW_DEVICE = "shadow-cuda"


def check_device(device: str) -> str:
    device = device.strip().lower()
    if device not in ("cpu", "cuda", SHADOW_DEVICE) and not (device.startswith("cuda:") and device[5:].isdigit()):
        raise UsageError(f"unknown device {device!r}; use cpu, cuda, cuda:N or {SHADOW_DEVICE}")
    return device


def _function_target(spec: str, options: dict[str, str], *, setup: str | None, device: str | None) -> Target:
    module_part, function_name = _split(spec)
    loaded = load_module(module_part)
    step_function = _function(loaded, function_name)
    functions: dict[str, Callable[..., Any]] = {"step": step_function}
    if setup is not None:
        setup_module, setup_name = _split(setup) if ":" in setup else (module_part, setup)
        setup_loaded = loaded if setup_module == module_part else load_module(setup_module)
        functions = {"setup": _function(setup_loaded, setup_name), "step": step_function}
    state_parameter = first_parameter(step_function) if setup is not None else None
    if setup is not None and state_parameter is None:
        raise UsageError(f"{function_name}() takes no parameter to receive what {setup} returns")
    filled = {"step": {state_parameter}} if state_parameter else {}
    has_device = {role for role, f in functions.items() if "device" in _parameters(f)}
    if "device" in options and not has_device:  # --device among the target's options: what to record
        device = device or options.pop("device")
        options.pop("device", None)
    if device is not None and "device" not in options and has_device:
        options = {**options, "device": device}
    kwargs = bind_options(functions, options, filled)
    recorded = check_device(device or str(kwargs.get("step", {}).get("device")
                                          or kwargs.get("setup", {}).get("device") or _default_device(functions)))
    setup_call, step_call = _calls(functions, kwargs, state_parameter)
    name = f"{loaded.name}:{function_name}"
    root = find_project_root(loaded.file, module=loaded.name) if loaded.file is not None else Path(os.getcwd())
    params = {**kwargs.get("setup", {}), **kwargs["step"]}
    return Target(name=name, label="", setup=setup_call, step=step_call, thread_name=name, params=params,
                  device=recorded, project_root=str(root), user_packages=(loaded.module.__name__.split(".")[0],))


def _split(spec: str) -> tuple[str, str]:
    module_part, _, function_name = spec.rpartition(":")
    if not module_part or not function_name.isidentifier():
        raise TargetError(f"bad target {spec!r}: expected a workload name, module:function or file.py:function")
    return module_part, function_name


def _function(loaded: LoadedModule, name: str) -> Callable[..., Any]:
    function = getattr(loaded.module, name, None)
    if not callable(function):
        public = sorted(n for n, v in vars(loaded.module).items()
                        if callable(v) and not n.startswith("_") and getattr(v, "__module__", None)
                        == loaded.module.__name__)
        hint = f"; its functions: {', '.join(public)}" if public else ""
        raise TargetError(f"{loaded.name} has no function {name!r}{hint}")
    return function


def _parameters(function: Callable[..., Any]) -> set[str]:
    return set(inspect.signature(function).parameters)


def _default_device(functions: Mapping[str, Callable[..., Any]]) -> str:
    for function in functions.values():
        parameter = inspect.signature(function).parameters.get("device")
        if parameter is not None and isinstance(parameter.default, str):
            return parameter.default
    return "cpu"


def _calls(functions: Mapping[str, Callable[..., Any]], kwargs: Mapping[str, dict[str, Any]],
           state_parameter: str | None) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    step_function = functions["step"]
    step_kwargs = kwargs["step"]
    if "setup" not in functions:
        return (lambda: None), (lambda _state: step_function(**step_kwargs))
    setup_function = functions["setup"]
    setup_kwargs = kwargs["setup"]
    return (lambda: setup_function(**setup_kwargs)), (
        lambda state: step_function(**{state_parameter: state}, **step_kwargs))


def _workload_target(name: str, options: dict[str, str], *, small: bool, device: str | None) -> Target:
    table = registered_workloads()
    if name not in table:
        raise TargetError(unknown_name_message("target", name, table) + " (or give module:function / file.py:function)")
    workload = table[name]
    fields = {f.name: f for f in dataclasses.fields(workload.params)}
    hints = typing.get_type_hints(workload.params)
    if device is not None and "device" in fields and "device" not in options:
        options = {**options, "device": device}
    values: dict[str, Any] = {}
    for option, raw in options.items():
        key = option.replace("-", "_")
        if key not in fields:
            known = ", ".join("--" + f.replace("_", "-") for f in fields)
            raise UsageError(f"workload {name!r} has no option --{option}; options: {known}")
        values[key] = convert(raw, hints.get(key, str), f"--{option}")
    try:
        params = workload.make_params(values, small=small)
    except (TypeError, ValueError) as error:
        raise UsageError(f"workload {name!r}: {error}") from None
    param_dict = dataclasses.asdict(params)
    label = str(param_dict.get(workload.variant_field, ""))
    module = getattr(workload.step, "__module__", "") or ""
    code = getattr(workload.step, "__code__", None)
    root = find_project_root(code.co_filename, module=module) if code is not None else Path(os.getcwd())
    return Target(name=name, label=label, setup=lambda: workload.setup(params), step=workload.step,
                  thread_name=workload.thread_name, params=param_dict,
                  device=check_device(device or str(param_dict.get("device", "cpu"))), project_root=str(root),
                  user_packages=(module.split(".")[0],) if module else ())
