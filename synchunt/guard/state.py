"""Per-thread guard state and the dispatch mode that sees every aten call of a guarded thread.

Torch keeps its dispatch-mode stack per thread, so pushing the mode only on the thread that entered a guard
is what makes the guard thread-scoped: other threads never reach ``__torch_dispatch__``. Python-level
patches (``synchunt.guard.patches``) are process-wide and consult this per-thread state before recording.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from synchunt.guard.classify import OpCall, Predicate, build_table, classify, describe_call, is_latent
from synchunt.guard.frames import FrameFilter, RawFrame, capture_stack
from synchunt.guard.records import SyncRecord


class Recorder(Protocol):
    """What a guard offers the state: its frame filter and a sink that may hand back an error to raise."""

    frame_filter: FrameFilter

    def receive(self, record: SyncRecord) -> BaseException | None: ...


class ThreadState(threading.local):
    """Everything the guard knows about one thread (``threading.local``: each thread sees its own)."""

    def __init__(self) -> None:
        self.recorders: list[Recorder] = []
        self.allow_reasons: list[str] = []
        self.mode: GuardMode | None = None
        # > 0 inside a patched method that reports its own sync: the copy it dispatches is the same sync
        self.suppress = 0
        # > 0 inside Tensor.__bool__: the scalar read it makes is SH110, not SH109
        self.truthiness = 0
        # the last aten call and whether it was reported, to pair torch's sync-debug warnings with ops
        self.last_op: torch._ops.OpOverload | None = None
        self.last_op_reported = False


STATE = ThreadState()

_TABLE: dict[torch._ops.OpOverload, tuple[tuple[str, Predicate], ...]] | None = None
_TABLE_LOCK = threading.Lock()


def op_table() -> dict[torch._ops.OpOverload, tuple[tuple[str, Predicate], ...]]:
    global _TABLE
    with _TABLE_LOCK:
        if _TABLE is None:
            _TABLE = build_table()
        return _TABLE


def op_name(func: torch._ops.OpOverload) -> str:
    """``aten::index`` for ``aten.index.Tensor`` (the overload name is dropped, as in profiler traces)."""
    return func.name().split(".", 1)[0]


def report(rule: str, op: str, *, latent: bool, detail: str, source: str, raw: Sequence[RawFrame]) -> None:
    """Deliver one record to each active guard of this thread; raise the first error a guard hands back."""
    state = STATE
    allow_reason = state.allow_reasons[-1] if state.allow_reasons else None
    thread = threading.current_thread().name
    errors: list[BaseException] = []
    for recorder in dict.fromkeys(state.recorders):  # a guard entered twice (recursion) records once
        frames = recorder.frame_filter.user_frames(raw)
        innermost = frames[0]
        record = SyncRecord(rule=rule, op=op, filename=innermost.filename, lineno=innermost.lineno,
                            function=innermost.function, stack=frames, thread=thread, latent=latent,
                            detail=detail, source=source, allowed=allow_reason is not None,
                            allow_reason=allow_reason)
        error = recorder.receive(record)
        if error is not None:
            errors.append(error)
    if errors:
        raise errors[0]


class GuardMode(TorchDispatchMode):
    """Classifies each aten call of its thread against the catalogue's ``guard_ops``."""

    def __init__(self, track_every_op: bool) -> None:
        super().__init__()
        self._table = op_table()
        self._track_every_op = track_every_op

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        entries = self._table.get(func)
        if self._track_every_op:
            tracked = STATE
            tracked.last_op, tracked.last_op_reported = func, False
        if entries is None:  # the hot path: most ops are not in the catalogue
            return func(*args, **kwargs) if kwargs else func(*args)
        kwargs = kwargs or {}
        state = STATE
        if state.suppress or not state.recorders:
            return func(*args, **kwargs)
        call = OpCall(func, args, kwargs, truthiness=state.truthiness > 0)
        code = classify(call, entries)
        if code is None:
            return func(*args, **kwargs)
        # Capture before running: the op may free its inputs; describe them while they are intact.
        detail, latent, raw = describe_call(call), is_latent(call), capture_stack()
        # Set before running: torch's sync-debug warning for this op may arrive while it runs.
        state.last_op_reported = True
        result = func(*args, **kwargs)
        report(code, op_name(func), latent=latent, detail=detail, source="dispatch", raw=raw)
        return result


def push(recorder: Recorder, *, track_every_op: bool) -> None:
    state = STATE
    if state.mode is None:
        mode = GuardMode(track_every_op)
        mode.__enter__()
        state.mode = mode
    state.recorders.append(recorder)


def pop(recorder: Recorder) -> None:
    state = STATE
    if not state.recorders or state.recorders[-1] is not recorder:
        raise RuntimeError("synchunt guards must be exited in the reverse order of entry on each thread")
    state.recorders.pop()
    if not state.recorders and state.mode is not None:
        mode, state.mode = state.mode, None
        mode.__exit__(None, None, None)


def is_guarded() -> bool:
    """True when the calling thread is inside at least one guard."""
    return bool(STATE.recorders)
