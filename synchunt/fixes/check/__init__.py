"""The checker: runs a rewrite and the code it replaces on the same generated inputs, compares their results,
and counts the rewrite's syncs under synchunt's runtime guard (on a machine without a GPU they are latent).

torch is imported here, on the first check, never when ``synchunt.fixes`` is imported. Results are cached per
recipe (pattern, expression, feeds), so one expression is checked once per process.
"""

from __future__ import annotations

import copy
import importlib.util
import types
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from synchunt.fixes.check.compare import equal, representable
from synchunt.fixes.check.feeds import CASES, GENERATORS, AnyKey, Case
from synchunt.fixes.check.programs import DEVICE, SAFE_BUILTINS, Refused, Use, free_uses, lower
from synchunt.fixes.model import CheckSpec, Feed

Status = Literal["passed", "failed", "unchecked"]
MIN_CASES = 4


@dataclass(frozen=True)
class CheckResult:
    """``passed``: equal on ``cases`` inputs and no more syncs than allowed; ``failed``: a difference or a sync
    (``note`` says which); ``unchecked``: the check could not run (``note`` says why)."""

    status: Status
    note: str
    cases: int = 0
    original_syncs: int = 0
    rewrite_syncs: int = 0


def torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


def run_check(spec: CheckSpec, device: str | None = None) -> CheckResult:
    """Check one recipe on ``device`` (default: CUDA when available, else the CPU)."""
    if not torch_available():
        return CheckResult("unchecked", "not checked: torch is not installed")
    return _cached(spec, device or _default_device())


def _default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@lru_cache(maxsize=4096)
def _cached(spec: CheckSpec, device: str) -> CheckResult:
    import torch

    from synchunt.guard import watch

    try:
        setup = lower(spec.setup, spec.torch_name)
        programs = [lower(spec.original, spec.torch_name), lower(spec.rewritten, spec.torch_name)]
        uses = free_uses([setup, *programs], spec.torch_name, _tensor_attributes(torch), setup=setup)
    except Refused as reason:
        return CheckResult("unchecked", f"cannot check: the code {reason}")
    except SyntaxError:
        return CheckResult("unchecked", "cannot check: the rewrite does not parse on its own")
    feeds = dict(spec.feeds)
    for path, use in uses.items():
        if path not in feeds and not any(path.startswith(fed + ".") for fed in feeds):
            feed = _feed_for(use)
            if feed is None:
                return CheckResult("unchecked", f"cannot check: cannot feed `{path}` (a call the checker cannot make)")
            feeds[path] = feed
    compiled = [compile(program, "<synchunt-fix-check>", "exec") for program in (setup, *programs)]
    applicable, original_syncs, rewrite_syncs, first_error = 0, 0, 0, ""
    for number in range(CASES):
        case = Case(number, device)
        try:
            values = _generate(case, feeds, torch)
        except Exception as error:  # a feed that does not fit this case's sizes
            first_error = first_error or f"{type(error).__name__}: {error}"
            continue
        original, original_error, synced = _run(compiled[:2], values, spec, torch, watch, device)
        if original_error is None and not representable(original):
            continue
        # A check's original fails only by its own AssertionError; any other error means the inputs do not fit.
        if original_error is not None and not (spec.compare == "raises" and original_error.startswith("Assertion")):
            first_error = first_error or original_error
            continue
        rewritten, rewrite_error, rewrite_synced = _run([compiled[0], compiled[2]], values, spec, torch, watch,
                                                        device)
        original_syncs, rewrite_syncs = original_syncs + synced, max(rewrite_syncs, rewrite_synced)
        if spec.compare == "raises":
            if (original_error is None) != (rewrite_error is None):
                return CheckResult("failed", f"on case {number} one raised and the other did not "
                                   f"({original_error or rewrite_error})", applicable)
        elif rewrite_error is not None:
            return CheckResult("failed", f"the rewrite raised {rewrite_error} on case {number}", applicable)
        if rewrite_error is None and original_error is None and not equal(original, rewritten, spec.compare, torch):
            return CheckResult("failed", f"results differ on case {number}: {_short(original)} vs {_short(rewritten)}",
                               applicable)
        applicable += 1
    if applicable < MIN_CASES:
        return CheckResult("unchecked", f"cannot check: the original ran on {applicable} of {CASES} generated inputs"
                           + (f" ({first_error})" if first_error else ""))
    if rewrite_syncs > spec.allowed_syncs:
        return CheckResult("failed", f"the rewrite synced {rewrite_syncs} times under the guard", applicable,
                           original_syncs, rewrite_syncs)
    syncs = ("no sync" if not spec.allowed_syncs else f"at most {spec.allowed_syncs} sync, the batched read")
    return CheckResult("passed", f"equal on {applicable} generated inputs ({spec.inputs}, on {device}); the rewrite "
                       f"made {syncs} under the guard, the original {original_syncs}", applicable,
                       original_syncs, rewrite_syncs)


def _tensor_attributes(torch: Any) -> frozenset[str]:
    return frozenset(name for name in dir(torch.Tensor) if not name.startswith("__"))


def _feed_for(use: Use) -> Feed | None:
    if use.called:
        return None
    if use.scalar and not use.attributes - {"item"}:
        return Feed("scalar_tensor")
    if use.tensor:
        return Feed("tensor", dtype="float", min_size=2)
    if use.index:
        return Feed("index")
    return Feed("number")


def _generate(case: Case, feeds: dict[str, Feed], torch: Any) -> dict[str, Any]:
    rng = case.rng
    values: dict[str, Any] = {}
    scope: dict[str, Any] = {}
    for path, feed in feeds.items():
        like = eval(feed.like, {"__builtins__": {}}, dict(scope)) if feed.like else None
        value = GENERATORS[feed.kind](case, feed, torch, like, rng)
        values[path] = value
        _place(scope, path, value)
    return values


def _place(scope: dict[str, Any], path: str, value: Any) -> None:
    """Bind ``a.b.c`` in ``scope``: ``a`` a namespace holding ``b``, a namespace holding ``c``."""
    head, *rest = path.split(".")
    if not rest:
        scope[head] = value
        return
    holder = scope.setdefault(head, types.SimpleNamespace())
    for part in rest[:-1]:
        if not hasattr(holder, part):
            setattr(holder, part, types.SimpleNamespace())
        holder = getattr(holder, part)
    setattr(holder, rest[-1], value)


def _run(programs: list[Any], values: dict[str, Any], spec: CheckSpec, torch: Any, watch: Any,
         device: str) -> tuple[Any, str | None, int]:
    """The setup, then the program under the guard, on a fresh copy of the inputs: ``(results, error or None,
    syncs under the guard)``."""
    import builtins

    allowed = {name: getattr(builtins, name) for name in SAFE_BUILTINS if hasattr(builtins, name)}
    allowed["__import__"] = builtins.__import__  # torch's C++ imports through the calling frame's builtins
    scope: dict[str, Any] = {"__builtins__": allowed,
                             spec.torch_name: torch, DEVICE: device}
    for path, value in values.items():
        _place(scope, path, _fresh(value, torch))
    setup, program = programs
    error, guard = None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecations of the user's idiom are theirs to see, not the check's
        try:
            exec(setup, scope)  # builds inputs as the user's code does; not the rewrite's syncs
            with watch() as guard:
                exec(program, scope)  # the user's own expression, on generated inputs only
        except Exception as raised:
            error = f"{type(raised).__name__}: {str(raised).splitlines()[0] if str(raised) else ''}".rstrip(": ")
    results = tuple(scope.get(name) for name in spec.results)
    return results, error, len(guard.syncs) if guard is not None else 0


def _fresh(value: Any, torch: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, list | tuple):
        return type(value)(_fresh(item, torch) for item in value)
    if isinstance(value, AnyKey):
        return AnyKey(_fresh(value.value, torch))
    if isinstance(value, types.SimpleNamespace):
        return types.SimpleNamespace(**{key: _fresh(item, torch) for key, item in vars(value).items()})
    return copy.copy(value) if not callable(value) else value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


__all__ = ["CheckResult", "run_check", "torch_available"]
