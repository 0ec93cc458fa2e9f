"""Turn one intercepted sync into a record for every guard of the calling thread and task."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from synchunt.guard import scope
from synchunt.guard.frames import RawFrame
from synchunt.guard.records import SyncRecord
from synchunt.shadow.state import is_active as shadow_active

Result = TypeVar("Result")


def report(entries: Sequence[scope.Entry], rule: str, op: str, *, latent: bool, detail: str, source: str,
           raw: Sequence[RawFrame], raise_errors: bool = True) -> None:
    """Deliver one record to each guard in ``entries``; raise the first error a guard hands back."""
    allow_reason = scope.allow_reason()
    thread = threading.current_thread().name
    # Under the shadow device an op on its (device-resident) tensors would sync on a GPU, but none synced here.
    shadow = shadow_active()
    residency = "host" if latent else "device"
    errors: list[BaseException] = []
    for recorder in dict.fromkeys(entry.recorder for entry in entries):  # entered twice (recursion): once
        frames = recorder.frame_filter.user_frames(raw)
        innermost = frames[0]
        record = SyncRecord(rule=rule, op=op, file=innermost.file, line=innermost.line,
                            function=innermost.function, stack=frames, thread=thread, latent=latent or shadow,
                            detail=detail, source=source, allowed=allow_reason is not None,
                            allow_reason=allow_reason, residency=residency, shadow=shadow)
        error = recorder.receive(record)
        if error is not None:
            errors.append(error)
    if errors and raise_errors:
        raise errors[0]


def run_and_report(entries: Sequence[scope.Entry], run: Callable[[], Result], rule: str, op: str, *,
                   latent: bool, detail: str, source: str, raw: Sequence[RawFrame]) -> Result:
    """Run the syncing call, then record it. A call that raises is recorded too (its error wins)."""
    flags = scope.FLAGS
    flags.in_reported += 1
    try:
        result = run()
    except BaseException:
        report(entries, rule, op, latent=latent, detail=detail, source=source, raw=raw, raise_errors=False)
        raise
    finally:
        flags.in_reported -= 1
    report(entries, rule, op, latent=latent, detail=detail, source=source, raw=raw)
    return result


def op_name(func: Any) -> str:
    """``aten::index`` for ``aten.index.Tensor`` (the overload name is dropped, as in profiler traces)."""
    return func.name().split(".", 1)[0]
