"""Progress reporting for long loads and multi-rank runs.

The library never prints: functions that take long accept a `Progress` and report tasks to it; the default
does nothing. The CLI passes a `RichProgress`, which draws bars on stderr only when stderr is a terminal and
refreshes from the caller's thread (no background thread, so worker processes can be forked safely).
"""

from __future__ import annotations

import time
from typing import IO, Any, Protocol


class Task(Protocol):
    def advance(self, amount: float = 1) -> None: ...

    def __enter__(self) -> Task: ...

    def __exit__(self, *exc: object) -> None: ...


class Progress(Protocol):
    def task(self, description: str, total: float | None = None) -> Task:
        """A unit of work with ``total`` steps (bytes, traces); use as a context manager."""
        ...


class _NullTask:
    def advance(self, amount: float = 1) -> None:
        """Nothing to show."""

    def __enter__(self) -> _NullTask:
        return self

    def __exit__(self, *exc: object) -> None:
        """Nothing to close."""


class NullProgress:
    """Reports nothing (the library's default)."""

    def task(self, description: str, total: float | None = None) -> _NullTask:
        return _NullTask()


NULL_PROGRESS = NullProgress()


class _RichTask:
    def __init__(self, owner: RichProgress, task_id: Any):
        self._owner = owner
        self._id = task_id

    def advance(self, amount: float = 1) -> None:
        self._owner._bars.advance(self._id, amount)
        self._owner._refresh()

    def __enter__(self) -> _RichTask:
        return self

    def __exit__(self, *exc: object) -> None:
        self._owner._finish(self._id)


class RichProgress:
    """rich progress bars on ``file`` (stderr by default), or nothing when it is not a terminal."""

    def __init__(self, file: IO[str] | None = None, *, enabled: bool | None = None, min_interval: float = 0.1):
        from rich.console import Console

        self._console = Console(file=file, stderr=file is None, force_terminal=enabled)
        self.enabled = self._console.is_terminal if enabled is None else enabled
        self._min_interval = min_interval
        self._last = 0.0
        self._bars: Any = None
        self._open = 0

    def task(self, description: str, total: float | None = None) -> _RichTask | _NullTask:
        if not self.enabled:
            return _NullTask()
        if self._bars is None:
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

            self._bars = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                                  TimeRemainingColumn(), console=self._console, auto_refresh=False, transient=True)
            self._bars.start()
        self._open += 1
        return _RichTask(self, self._bars.add_task(description, total=total))

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._last >= self._min_interval:
            self._last = now
            self._bars.refresh()

    def _finish(self, task_id: Any) -> None:
        self._bars.remove_task(task_id)
        self._open -= 1
        if self._open == 0:
            self._bars.stop()
            self._bars = None
