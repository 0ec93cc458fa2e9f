"""Process-wide patches for the syncs that never reach the dispatcher as a catalogue op.

- ``Tensor.tolist/cpu/numpy`` read a tensor on the host; on a CPU tensor nothing is dispatched, so the guard
  reports them as latent SH201 (on a device tensor, as a real one; the copy they dispatch is not reported
  twice). ``Tensor.__bool__`` and ``is_nonzero`` only mark the scalar read they make as truthiness (SH110).
- On CUDA: ``torch.cuda.synchronize``, ``Event.synchronize``, ``Stream.synchronize`` (SH301–SH303), which
  ``torch.cuda.set_sync_debug_mode`` does not see, and torch's sync debug mode itself as a second signal for
  syncs no catalogue op explains.

The patches are installed while at least one guard is active on any thread and removed with the last one.
Every wrapper checks the calling thread and task first, so unguarded code only pays one context lookup.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch

from synchunt.guard import scope
from synchunt.guard.classify import on_device
from synchunt.guard.frames import capture_stack
from synchunt.guard.reporting import report, run_and_report

_HOST_READS = ("tolist", "cpu", "numpy")
_SYNC_DEBUG_MESSAGE = "called a synchronizing CUDA operation"


def _describe_tensor(tensor: torch.Tensor) -> str:
    shape = "×".join(str(n) for n in tensor.shape)
    return f"self={str(tensor.dtype).removeprefix('torch.')}[{shape}] {tensor.device}"


def _host_read(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        flags = scope.FLAGS
        active = scope.active_entries()
        if not active or flags.suppress:
            return original(self, *args, **kwargs)

        def run() -> Any:
            flags.suppress += 1
            try:
                return original(self, *args, **kwargs)
            finally:
                flags.suppress -= 1

        return run_and_report(active, run, "SH201", f"Tensor.{name}", latent=not on_device(self),
                              detail=_describe_tensor(self), source="method", raw=capture_stack())

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = original.__doc__
    return wrapper


def _truthiness(original: Callable[..., bool]) -> Callable[..., bool]:
    def wrapper(*args: Any, **kwargs: Any) -> bool:
        flags = scope.FLAGS
        flags.truthiness += 1
        try:
            return original(*args, **kwargs)
        finally:
            flags.truthiness -= 1

    wrapper.__name__ = wrapper.__qualname__ = getattr(original, "__name__", "__bool__")
    wrapper.__doc__ = original.__doc__
    return wrapper


def _explicit_sync(rule: str, op: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        active = scope.active_entries()
        if not active:
            return original(*args, **kwargs)
        return run_and_report(active, lambda: original(*args, **kwargs), rule, op, latent=False, detail="",
                              source="explicit", raw=capture_stack())

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
        active = scope.active_entries()
        if active:
            flags = scope.FLAGS
            # A warning raised while a reported op or method runs is that same sync.
            if not flags.suppress and not flags.in_reported:
                report(active, "SH109", "unclassified", latent=False,
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


class Patches:
    """The Python-level patches, installed on construction and removed by :meth:`undo`."""

    def __init__(self) -> None:
        patches = [_AttributePatch(torch.Tensor, name, lambda original, n=name: _host_read(n, original))
                   for name in _HOST_READS]
        patches += [_AttributePatch(torch.Tensor, "__bool__", _truthiness),
                    _AttributePatch(torch.Tensor, "is_nonzero", _truthiness),
                    _AttributePatch(torch, "is_nonzero", _truthiness)]
        self._sync_debug: _SyncDebugSignal | None = None
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

    def undo(self) -> None:
        for patch in reversed(self._patches):
            patch.undo()
        self._patches = []
        if self._sync_debug is not None:
            self._sync_debug.undo()
            self._sync_debug = None
