"""Process-wide patches for the syncs that never reach the dispatcher as a catalogue op.

The catalogue's ``guard_patches`` say what to wrap: host reads such as ``Tensor.tolist`` (on a CPU tensor nothing
is dispatched, so the guard reports them as latent; on a device tensor as real ones, and the copy they dispatch
is not reported twice), explicit syncs such as ``torch.cuda.synchronize`` (invisible to
``torch.cuda.set_sync_debug_mode``), and callables like ``Tensor.__bool__`` that only mark the scalar read they
make as their rule's. On CUDA, torch's sync debug mode is a second signal: a sync it reports that no catalogue op
explains is recorded under the catalogue's catch-all rule.

The patches are installed while at least one guard is active on any thread and removed with the last one.
Every wrapper checks the calling thread and task first, so unguarded code only pays one context lookup.
"""

from __future__ import annotations

import collections
import itertools
import linecache
import operator
import sys
import warnings
from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Any

import torch

from synchunt.guard import scope
from synchunt.guard.call import on_device
from synchunt.guard.frames import capture_stack
from synchunt.guard.reporting import report, run_and_report
from synchunt.rules import RULES, PatchEffect, catch_all_rule
from synchunt.rules.reviewed import NOT_HOST_SYNC_CALLS
from synchunt.shadow import state as shadow_state

_SYNC_DEBUG_MESSAGE = "called a synchronizing CUDA operation"


def _describe_tensor(tensor: torch.Tensor) -> str:
    shape = "×".join(str(n) for n in tensor.shape)
    return f"self={str(tensor.dtype).removeprefix('torch.')}[{shape}] {tensor.device}"


def _reporting(rule: str, op: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """Report ``rule`` for each call on a guarded thread. A call on a tensor (a host read) is latent when the
    tensor is not on a device, and the copy it dispatches is the same sync (not reported again)."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        flags = scope.FLAGS
        active = scope.active_entries()
        if not active or flags.suppress:
            return original(*args, **kwargs)
        tensor = args[0] if args and isinstance(args[0], torch.Tensor) else None

        def run() -> Any:
            flags.suppress += 1
            try:
                return original(*args, **kwargs)
            finally:
                flags.suppress -= 1

        return run_and_report(active, run, rule, op, latent=tensor is not None and not on_device(tensor),
                              detail=_describe_tensor(tensor) if tensor is not None else "",
                              source="method" if tensor is not None else "explicit", raw=capture_stack())

    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", op)
    wrapper.__doc__ = original.__doc__
    return wrapper


def _names_the_host(*args: Any, **kwargs: Any) -> bool:
    """``t.to("cpu")`` / ``t.to(device="cpu")`` of a host tensor, blocking: the host named by the literal string,
    where nothing dispatches (the tensor is already there). A ``torch.device`` may be ``x.device`` (the host in a
    CPU run, the device on a GPU, where the copy op is classified instead); ``.to(dtype)`` and ``.to(other)`` make
    no move named here."""
    target = kwargs.get("device") if kwargs else None
    if target is None and len(args) > 1:
        target = args[1]
    if type(target) is not str or not target.startswith("cpu"):
        return False
    if kwargs.get("non_blocking") or (len(args) > 3 and args[3] is True):
        return False
    # From a device tensor the copy op dispatches and is classified there (as the trace names it, aten::_to_copy).
    tensor = args[0]
    if not isinstance(tensor, torch.Tensor) or on_device(tensor):
        return False
    # A string variable may hold the device a GPU run moves to (diffusers' `.to(dtype=..., device=device)` with
    # device="cpu" in a CPU run is a host-to-device copy on a GPU): the host is named where the calling line spells
    # it. Read only for the rare call that got this far; without the source, the call is taken as written.
    caller = sys._getframe(2)  # the caller of the patched method (this condition, then the wrapper, in between)
    line = linecache.getline(caller.f_code.co_filename, caller.f_lineno)
    return not line or "'cpu" in line or '"cpu' in line


# A GuardPatch's ``when`` → the condition its call must meet (an unknown name fails when the patches are planned).
PATCH_CONDITIONS: dict[str, Callable[..., bool]] = {
    "names-the-host": _names_the_host,
}


def _conditional(condition: Callable[..., bool], reporting: Callable[..., Any],
                 original: Callable[..., Any]) -> Callable[..., Any]:
    """Report through ``reporting`` only the calls that meet ``condition``; the others pay one argument check."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if condition(*args, **kwargs):
            return reporting(*args, **kwargs)
        return original(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", "wrapper")
    wrapper.__doc__ = original.__doc__
    return wrapper


def _marking(original: Callable[..., Any]) -> Callable[..., Any]:
    """The scalar read made inside the call is the marking rule's (truthiness), not a generic scalar read."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        flags = scope.FLAGS
        flags.truthiness += 1
        try:
            return original(*args, **kwargs)
        finally:
            flags.truthiness -= 1

    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", "__bool__")
    wrapper.__doc__ = original.__doc__
    return wrapper


def _quiet(original: Callable[..., Any]) -> Callable[..., Any]:
    """A reviewed call whose host reads are not syncs: nothing it does is reported."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        flags = scope.FLAGS
        flags.suppress += 1
        try:
            return original(*args, **kwargs)
        finally:
            flags.suppress -= 1

    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", "wrapper")
    wrapper.__doc__ = original.__doc__
    return wrapper


_MISSING = object()
_MISSINGS = itertools.repeat(_MISSING)
_OWN_GET = MappingProxyType.get
# (id(owner), attribute) → (the original wrapped, its wrapper): entering a guard again only sets attributes.
_MADE: dict[tuple[int, str], tuple[Any, Any]] = {}


# Runs a ``map`` of C calls (``setattr``) to its end, keeping nothing: the loop runs in C, without one Python step
# (nor a Python frame) per attribute.
_consume: Callable[[Iterator[Any]], None] = collections.deque(maxlen=0).extend


class _Attributes:
    """The plan's attributes, resolved once into parallel tuples, so that entering and leaving a guard reads, sets
    and restores all of them in C loops (every outermost entry does, so this is most of what entering costs).

    A wrapper is made again only for an attribute that changed since it was made (a user's own patch); what is
    restored is what each owner's own dict held at entry (``_MISSING``: an inherited attribute, deleted again)."""

    def __init__(self, plan: PatchPlan) -> None:
        self.plan = plan
        self.owners = tuple(owner for owner, _, _ in plan)
        self.names = tuple(name for _, name, _ in plan)
        # live read-only views of the owners' own dicts (a class's is one already, a module's is wrapped)
        self.own = tuple(_own_view(owner) for owner in self.owners)
        self._originals: list[Any] | None = None  # what the wrappers below wrap
        self._wrappers: tuple[Any, ...] = ()
        self._saved: list[Any] | None = None  # the own values last saved, and how they restore:
        self._restore_sets: tuple[tuple[Any, ...], tuple[str, ...], tuple[Any, ...]] = ((), (), ())
        self._restore_dels: tuple[tuple[Any, ...], tuple[str, ...]] = ((), ())

    def apply(self) -> list[Any]:
        """Set every wrapper; returns what :meth:`restore` puts back (lists, not tuples: a tuple built from a ``map``
        is resized as it grows and never comes back from the tuple free list, so two a guard entry would add up
        to a garbage collection every few hundred entries)."""
        saved = list(map(_OWN_GET, self.own, self.names, _MISSINGS))
        originals = list(map(getattr, self.owners, self.names))
        # by identity (what a user patched in may define its own ==)
        if self._originals is None or not all(map(operator.is_, originals, self._originals)):
            self._wrappers = tuple(map(_wrapper, self.owners, self.names, (make for _, _, make in self.plan),
                                       originals))
            self._originals = originals
        try:
            _consume(map(setattr, self.owners, self.names, self._wrappers))
        except BaseException:
            self._put_back(saved)
            raise
        return saved

    def restore(self, saved: list[Any]) -> None:
        # split again only when an attribute changed since the last entry
        if self._saved is None or not all(map(operator.is_, saved, self._saved)):
            kept = [index for index, value in enumerate(saved) if value is not _MISSING]
            gone = [index for index, value in enumerate(saved) if value is _MISSING]
            self._restore_sets = (tuple(self.owners[i] for i in kept), tuple(self.names[i] for i in kept),
                                  tuple(saved[i] for i in kept))
            self._restore_dels = (tuple(self.owners[i] for i in gone), tuple(self.names[i] for i in gone))
            self._saved = saved
        _consume(map(setattr, *self._restore_sets))
        _consume(map(delattr, *self._restore_dels))

    def _put_back(self, saved: list[Any]) -> None:
        """After a failed :meth:`apply`: each attribute that no longer holds its saved value gets it back."""
        for owner, name, own, value in zip(self.owners, self.names, self.own, saved, strict=True):
            if own.get(name, _MISSING) is not value:
                if value is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, value)


def _own_view(owner: Any) -> MappingProxyType[str, Any]:
    own = vars(owner)
    return own if isinstance(own, MappingProxyType) else MappingProxyType(own)


def _wrapper(owner: Any, name: str, make: Callable[[Any], Any], original: Any) -> Any:
    """The wrapper of ``original`` at ``owner.name``, made once per original."""
    known = _MADE.get((id(owner), name))
    if known is None or known[0] is not original:
        known = _MADE[(id(owner), name)] = (original, make(original))
    return known[1]


class _SyncDebugSignal:
    """Turns on ``torch.cuda.set_sync_debug_mode("warn")`` and turns its warnings into records.

    Warn mode (never error mode) keeps other threads running; the warnings of threads that are not guarded
    are dropped when the mode was off before, and passed on unchanged when the user had turned it on.
    """

    def __init__(self) -> None:
        self.previous_mode = torch.cuda.get_sync_debug_mode()
        self.active = self.previous_mode != 2  # error mode raises on its own; leave it alone
        if not self.active:
            return
        self.drop_unguarded = self.previous_mode == 0
        warnings.filterwarnings("always", message=_SYNC_DEBUG_MESSAGE, category=UserWarning)
        self.filter_entry = warnings.filters[0]
        self.original_showwarning = warnings.showwarning
        warnings.showwarning = self._showwarning
        torch.cuda.set_sync_debug_mode("warn")

    def _showwarning(self, message: Warning | str, category: type[Warning], filename: str, lineno: int,
                     file: Any = None, line: str | None = None) -> None:
        if category is not UserWarning or _SYNC_DEBUG_MESSAGE not in str(message):
            self.original_showwarning(message, category, filename, lineno, file, line)
            return
        active = scope.active_entries()
        if active:
            flags = scope.FLAGS
            # A warning raised while a reported op or patched call runs is that same sync; any other is a sync
            # no catalogue op or patch explained: recorded under the catch-all rule, at the user's line.
            if not flags.suppress and not flags.in_reported:
                report(active, catch_all_rule().code, "unclassified", latent=False,
                       detail="reported by torch.cuda sync debug mode", source="sync-debug", raw=capture_stack())
            return
        if not self.drop_unguarded:
            self.original_showwarning(message, category, filename, lineno, file, line)

    def undo(self) -> None:
        if not self.active:
            return
        torch.cuda.set_sync_debug_mode(self.previous_mode)
        warnings.showwarning = self.original_showwarning
        if self.filter_entry in warnings.filters:
            warnings.filters.remove(self.filter_entry)
            mutated = getattr(warnings, "_filters_mutated", None)  # the cache reset of CPython's warnings
            if mutated is not None:
                mutated()


PatchPlan = list[tuple[Any, str, Callable[[Any], Any]]]
_PLAN: PatchPlan | None = None
_ATTRIBUTES: _Attributes | None = None


def _plan() -> PatchPlan:
    """(owner, attribute, wrapper factory) for every patch this torch build has, resolved once."""
    global _PLAN
    if _PLAN is None:
        cuda, plan = _real_cuda(), []
        for rule in RULES:
            for patch in rule.guard_patches:
                owner, name = _resolve_owner(patch.target), patch.target.rsplit(".", 1)[1]
                if (patch.needs_cuda and not cuda) or owner is None or not hasattr(owner, name):
                    continue  # not in this torch build, or needs CUDA
                if patch.when is not None and patch.when not in PATCH_CONDITIONS:
                    raise KeyError(f"rule {rule.code}: no guard patch condition named {patch.when!r}")
                if patch.effect is PatchEffect.MARK:
                    plan.append((owner, name, _marking))
                elif patch.when is not None:
                    plan.append((owner, name, lambda f, code=rule.code, op=patch.op_name, when=patch.when:
                                 _conditional(PATCH_CONDITIONS[when], _reporting(code, op, f), f)))
                else:
                    plan.append((owner, name, lambda f, code=rule.code, op=patch.op_name: _reporting(code, op, f)))
        for call in NOT_HOST_SYNC_CALLS:
            owner, name = _resolve_owner(call.target), call.target.rsplit(".", 1)[1]
            if owner is not None and hasattr(owner, name):
                plan.append((owner, name, _quiet))
        # Each attribute once: two wrappers of one attribute would each save and restore the other's.
        seen: set[tuple[int, str]] = set()
        for owner, name, _ in plan:
            if (id(owner), name) in seen:
                raise ValueError(f"guard patch {getattr(owner, '__name__', owner)}.{name} is planned twice")
            seen.add((id(owner), name))
        _PLAN = plan
    return _PLAN


def _attributes() -> _Attributes:
    """The plan's attributes, resolved into their tuples once."""
    global _ATTRIBUTES
    plan = _plan()
    if _ATTRIBUTES is None or _ATTRIBUTES.plan is not plan:
        _ATTRIBUTES = _Attributes(plan)
    return _ATTRIBUTES


_CUDA_BUILT = torch.backends.cuda.is_built()  # a build without CUDA never has it: asked at every guard entry


def _real_cuda() -> bool:
    """CUDA is here, not emulated: under the shadow device its explicit syncs come through :func:`_shadow_call`."""
    return _CUDA_BUILT and torch.cuda.is_available() and not shadow_state.is_active()


def _shadow_call(target: str, tensor: torch.Tensor | None, run: Callable[[], Any]) -> Any:
    """A call the shadow device makes for the user where the patch cannot see it (``tolist`` of a shadow tensor,
    its ``torch.cuda.synchronize``, a library op on device tensors): reported as the catalogue says a GPU run
    would have it, once per call."""
    known = _SHADOW_CALLS.get(target)
    if known is None:
        return run()
    code, op = known
    return _report_call(code, op, run, tensor)


def _report_call(code: str, op: str, run: Callable[[], Any], tensor: torch.Tensor | None) -> Any:
    wrapper = _reporting(code, op, lambda *args: run())
    return wrapper(tensor) if tensor is not None else wrapper()


def _is_library_op(op: str) -> bool:
    return "::" in op and op.partition("::")[0] not in ("aten", "prims")


# Library ops whose CUDA kernel waits inside C++ (torchvision::nms) and that the guard intercepts itself (a guard
# op): the shadow device follows them as the catalogue says, and the guard's own op reports them, once per call.
_GUARDED_LIBRARY_OPS = frozenset(op.packet for rule in RULES for op in rule.guard_ops if _is_library_op(op.packet))
_SHADOW_CALLS: dict[str, tuple[str, str]] = {
    **{patch.target: (rule.code, patch.op_name) for rule in RULES for patch in rule.guard_patches
       if patch.effect is not PatchEffect.MARK},
    # a library op no guard op intercepts: reported when the shadow device runs it; one sync per call, as a
    # trace counts it (every wait of one call is that call's)
    **{op.op: (rule.code, op.op) for rule in RULES for op in rule.trace_ops
       if _is_library_op(op.op) and op.op not in _GUARDED_LIBRARY_OPS}}
_SHADOW_TARGETS = frozenset(_SHADOW_CALLS) | _GUARDED_LIBRARY_OPS


class Patches:
    """The catalogue's guard patches (and on CUDA the sync-debug signal), installed on construction."""

    def __init__(self) -> None:
        self._attributes = _attributes()
        self._saved: list[Any] | None = self._attributes.apply()
        self._sync_debug = _SyncDebugSignal() if _real_cuda() else None
        shadow_state.set_reporter(_shadow_call, _SHADOW_TARGETS)

    def undo(self) -> None:
        shadow_state.set_reporter(None)
        saved, self._saved = self._saved, None
        if saved is not None:
            self._attributes.restore(saved)
        if self._sync_debug is not None:
            self._sync_debug.undo()
            self._sync_debug = None


def _resolve_owner(target: str) -> Any:
    """The object that holds the patched attribute: ``torch.Tensor`` for ``"torch.Tensor.tolist"``."""
    parts = target.split(".")
    if parts[0] != "torch":
        raise ValueError(f"guard patch {target!r} is not under torch")
    owner: Any = torch
    for depth, part in enumerate(parts[1:-1], start=2):
        # A loaded module wins over a same-named attribute (torch.optim.adam is also a function there).
        module = sys.modules.get(".".join(parts[:depth]))
        owner = module if module is not None else getattr(owner, part, None)
        if owner is None:
            return None
    return owner

