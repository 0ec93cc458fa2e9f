"""Process-wide patches for the syncs that never reach the dispatcher as a catalogue op.

- ``Tensor.tolist/cpu/numpy`` read a tensor on the host; on a CPU tensor nothing is dispatched, so the guard
  reports them as latent SH201 (on a device tensor, as a real one; the copy they dispatch is not reported
  twice). ``Tensor.__bool__`` and ``is_nonzero`` only mark the scalar read they make as truthiness (SH110).
- On CUDA: ``torch.cuda.synchronize``, ``Event.synchronize``, ``Stream.synchronize`` (SH301–SH303), which
  ``torch.cuda.set_sync_debug_mode`` does not see, and torch's sync debug mode itself as a second signal for
  syncs no catalogue op explains.

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

_HOST_READS = ("tolist", "cpu", "numpy")
_SYNC_DEBUG_MESSAGE = "called a synchronizing CUDA operation"
_COPY_OPS = frozenset({"aten::_to_copy", "aten::copy_", "aten::to"})


def _describe_tensor(tensor: torch.Tensor) -> str:
    shape = "×".join(str(n) for n in tensor.shape)
    return f"self={str(tensor.dtype).removeprefix('torch.')}[{shape}] {tensor.device}"


def _host_read(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        state = STATE
        if not state.recorders or state.suppress:
            return original(self, *args, **kwargs)
        raw = capture_stack()
        state.suppress += 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            state.suppress -= 1
        report("SH201", f"Tensor.{name}", latent=not on_device(self), detail=_describe_tensor(self),
               source="method", raw=raw)
        return result

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = original.__doc__
    return wrapper


def _truthiness(original: Callable[..., bool]) -> Callable[..., bool]:
    def wrapper(*args: Any, **kwargs: Any) -> bool:
        state = STATE
        state.truthiness += 1
        try:
            return original(*args, **kwargs)
        finally:
            state.truthiness -= 1

    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", "__bool__")
    wrapper.__doc__ = original.__doc__
    return wrapper


def _explicit_sync(rule: str, op: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not STATE.recorders:
            return original(*args, **kwargs)
        raw = capture_stack()
        result = original(*args, **kwargs)
        report(rule, op, latent=False, detail="", source="explicit", raw=raw)
        return result

    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", op)
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
            # Copies are classified by direction at dispatch (blocking host-to-device, SH202, is not a guard
            # rule); other ops the catalogue did not flag make an internal scalar read (SH109's mechanism).
            if not state.suppress and not state.last_op_reported and op not in _COPY_OPS:
                report("SH109", op, latent=False, detail="reported by torch.cuda sync debug mode",
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
        patches = [_AttributePatch(torch.Tensor, name, lambda original, n=name: _host_read(n, original))
                   for name in _HOST_READS]
        patches += [_AttributePatch(torch.Tensor, "__bool__", _truthiness),
                    _AttributePatch(torch.Tensor, "is_nonzero", _truthiness),
                    _AttributePatch(torch, "is_nonzero", _truthiness)]
        if torch.cuda.is_available():
            patches += [
                _AttributePatch(torch.cuda, "synchronize",
                                lambda f: _explicit_sync("SH301", "torch.cuda.synchronize", f)),
                _AttributePatch(torch.cuda.Event, "synchronize",
                                lambda f: _explicit_sync("SH302", "Event.synchronize", f)),
                _AttributePatch(torch.cuda.Stream, "synchronize",
                                lambda f: _explicit_sync("SH303", "Stream.synchronize", f)),
            ]
            accelerator = getattr(torch, "accelerator", None)
            if accelerator is not None and hasattr(accelerator, "synchronize"):
                patches.append(_AttributePatch(
                    accelerator, "synchronize",
                    lambda f: _explicit_sync("SH301", "torch.accelerator.synchronize", f)))
            self._sync_debug = _SyncDebugSignal()
        self._patches = patches

    def _uninstall(self) -> None:
        for patch in reversed(self._patches):
            patch.undo()
        self._patches = []
        if self._sync_debug is not None:
            self._sync_debug.undo()
            self._sync_debug = None


INSTALLATION = _Installation()
