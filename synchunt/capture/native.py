"""The moments torch.profiler starts, steps or stops: its C++ log lines muted, its frame names made canonical."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path


@contextlib.contextmanager
def profiler_call(log_path: Path, naming: Sequence[str]) -> Iterator[None]:
    """Around ``prof.start()``, ``prof.step()`` and ``prof.stop()``: stderr to ``log_path`` and ``sys.path`` as
    ``naming``. torch names each Python frame's file relative to a ``sys.path`` entry when a recording window
    closes; with the project root standing in for the folders inside it, every project file gets one name."""
    with _native_stderr_to(log_path), _search_path(naming):
        yield


@contextlib.contextmanager
def _search_path(naming: Sequence[str]) -> Iterator[None]:
    saved = list(sys.path)
    sys.path[:] = list(naming)
    try:
        yield
    finally:
        sys.path[:] = saved


@contextlib.contextmanager
def _native_stderr_to(path: Path) -> Iterator[None]:
    """Append file descriptor 2 to ``path`` while the profiler starts, steps or stops: Kineto logs its start/stop
    lines there from C++. The target's own steps run with stderr untouched, so its warnings stay visible.

    Starting the profiler off the main thread also makes libkineto print "External init callback must run in
    same thread as registerClient": the callback it skips is torch's on-demand client ``init()``, which is empty,
    so the message is noise for this use.
    """
    try:
        saved = os.dup(2)
    except OSError:  # no usable stderr (embedded interpreters): nothing to redirect
        yield
        return
    try:
        with path.open("ab") as sink:
            sys.stderr.flush()
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
    finally:
        os.close(saved)
