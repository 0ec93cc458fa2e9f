"""Process-wide patches for the syncs that never reach the dispatcher as a catalogue op.

The catalogue's ``guard_patches`` say what to wrap: host reads such as ``Tensor.tolist`` (on a CPU tensor nothing
is dispatched, so the guard reports them as latent; on a device tensor as real ones, and the copy they dispatch
is not reported twice), explicit syncs such as ``torch.cuda.synchronize`` (invisible to
``torch.cuda.set_sync_debug_mode``), and callables like ``Tensor.__bool__`` that only mark the scalar read they
make as their rule's. On CUDA, torch's sync debug mode is a second signal: a sync it reports that no catalogue op
explains is recorded under the catalogue's catch-all rule.

The patches are installed while at least one guard is active on any thread and removed with the last one.
Every wrapper checks the calling thread's state first, so unguarded threads only pay one attribute lookup.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import torch

from synchunt.guard.classify import on_device
from synchunt.guard.frames import capture_stack
from synchunt.guard.state import STATE, op_name, report
from synchunt.rules import RULES, PatchEffect, catch_all_rule

_SYNC_DEBUG_MESSAGE = "called a synchronizing CUDA operation"


def _describe_tensor(tensor: torch.Tensor) -> str:
    shape = "×".join(str(n) for n in tensor.shape)
    return f"self={str(tensor.dtype).removeprefix('torch.')}[{shape}] {tensor.device}"


def _reporting(rule: str, op: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """Report ``rule`` for each call on a guarded thread. A call on a tensor (a host read) is latent when the
    tensor is not on a device, and the copy it dispatches is the same sync (not reported again)."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state = STATE
        if not state.recorders or state.suppress:
            return original(*args, **kwargs)
        raw = capture_stack()
        tensor = args[0] if args and isinstance(args[0], torch.Tensor) else None
        state.suppress += 1
        try:
            result = original(*args, **kwargs)
        finally:
            state.suppress -= 1
        report(rule, op, latent=tensor is not None and not on_device(tensor),
               detail=_describe_tensor(tensor) if tensor is not None else "",
               source="method" if tensor is not None else "explicit", raw=raw)
        return result

    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", op)
    wrapper.__doc__ = original.__doc__
    return wrapper


def _marking(original: Callable[..., Any]) -> Callable[..., Any]:
    """The scalar read made inside the call is the marking rule's (truthiness), not a generic scalar read."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        state = STATE
        state.truthiness += 1
        try:
            return original(*args, **kwargs)
        finally:
            state.truthiness -= 1

    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", "__bool__")
    wrapper.__doc__ = original.__doc__
    return wrapper


class _AttributePatch:
    """Replace ``owner.name`` and put back exactly what was there (own attribute or inherited)."""

    def __init__(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        self.owner, self.name = owner, name
        self.had_own = name in vars(owner)
        self.saved = vars(owner)[name] if self.had_own else None
        setattr(owner, name, make(getattr(owner, name)))

    def undo(self) -> None:
        if self.had_own:
            setattr(self.owner, self.name, self.saved)
        else:
            delattr(self.owner, self.name)


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
        state = STATE
        if state.recorders:
            op = op_name(state.last_op) if state.last_op is not None else "unknown"
            # A sync no catalogue op or patch explained: recorded under the catch-all rule, with the op's name.
            if not state.suppress and not state.last_op_reported:
                report(catch_all_rule().code, op, latent=False, detail="reported by torch.cuda sync debug mode",
                       source="sync-debug", raw=capture_stack())
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


class _Installation:
    """Reference-counted: installed by the first active guard in the process, removed by the last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._patches: list[_AttributePatch] = []
        self._sync_debug: _SyncDebugSignal | None = None

    @property
    def tracks_sync_debug(self) -> bool:
        return self._sync_debug is not None and self._sync_debug.active

    def acquire(self) -> None:
        with self._lock:
            self._users += 1
            if self._users == 1:
                self._install()

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0:
                self._uninstall()

    def _install(self) -> None:
        cuda = torch.cuda.is_available()
        patches = []
        for rule in RULES:
            for patch in rule.guard_patches:
                if patch.needs_cuda and not cuda:
                    continue
                owner = _resolve_owner(patch.target)
                name = patch.target.rsplit(".", 1)[1]
                if owner is None or not hasattr(owner, name):  # not in this torch build
                    continue
                if patch.effect is PatchEffect.MARK:
                    patches.append(_AttributePatch(owner, name, _marking))
                else:
                    patches.append(_AttributePatch(
                        owner, name, lambda f, code=rule.code, op=patch.op_name: _reporting(code, op, f)))
        if cuda:
            self._sync_debug = _SyncDebugSignal()
        self._patches = patches

    def _uninstall(self) -> None:
        for patch in reversed(self._patches):
            patch.undo()
        self._patches = []
        if self._sync_debug is not None:
            self._sync_debug.undo()
            self._sync_debug = None


def _resolve_owner(target: str) -> Any:
    """The object that holds the patched attribute: ``torch.Tensor`` for ``"torch.Tensor.tolist"``."""
    parts = target.split(".")
    if parts[0] != "torch":
        raise ValueError(f"guard patch {target!r} is not under torch")
    owner: Any = torch
    for part in parts[1:-1]:
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    return owner


INSTALLATION = _Installation()
