"""synchunt: hunt hidden device-to-host syncs in PyTorch code.

Public API (imported lazily so that ``import synchunt`` stays cheap, e.g. for the pytest plugin):

- ``load_trace(path)`` → :class:`synchunt.trace.Trace` (DataFrames of events, threads, Python frames)
- ``analyze(paths, ...)`` → :class:`synchunt.attribute.Analysis` (DataFrames of syncs and call sites)
- ``watch()``, ``forbid_syncs()``, ``allow_syncs()``, ``SyncError``, ``is_guarded()`` → the runtime guard
- ``shadow_device()`` → a one-GPU machine emulated on the CPU, for the guard on CPU-only machines
"""

from __future__ import annotations

import importlib
from typing import Any

from synchunt.errors import SynchuntError, TargetError, TraceError, UsageError

__version__ = "0.1.0"

_LAZY = {
    "load_trace": "synchunt.trace",
    "Trace": "synchunt.trace",
    "analyze": "synchunt.attribute",
    "Analysis": "synchunt.attribute",
    "watch": "synchunt.guard",
    "forbid_syncs": "synchunt.guard",
    "allow_syncs": "synchunt.guard",
    "SyncError": "synchunt.guard",
    "is_guarded": "synchunt.guard",
    "shadow_device": "synchunt.shadow",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'synchunt' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["SynchuntError", "TargetError", "TraceError", "UsageError", "__version__", *_LAZY]
