"""The public guards: ``watch()`` records, ``forbid_syncs()`` raises, ``allow_syncs()`` exempts a region.

Each is a context manager and a decorator. A guard checks only the thread that entered it; nested guards on
one thread all receive the same syncs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from contextlib import ContextDecorator
from types import TracebackType
from typing import Literal

from synchunt.errors import UsageError
from synchunt.guard import state
from synchunt.guard.frames import FrameFilter
from synchunt.guard.patches import INSTALLATION
from synchunt.guard.records import SyncError, SyncRecord, SyncSite, group_by_site


class Watch(ContextDecorator):
    """Records every sync of the entering thread; ``syncs`` accumulates across entries (see ``clear``).

    ``skip_modules`` adds module prefixes whose frames are library code (besides torch, synchunt, pytest and
    the standard library); ``stack_depth`` caps the user frames kept per record. ``latent=False`` leaves out
    latent syncs (ops on host tensors) from ``violations``, ``count`` and ``by_site``; ``syncs`` keeps them.
    """

    def __init__(self, *, skip_modules: Iterable[str] = (), stack_depth: int = 24,
                 latent: bool = True) -> None:
        self.frame_filter = FrameFilter.with_extra(skip_modules, max_depth=stack_depth)
        self.include_latent = latent
        self._syncs: list[SyncRecord] = []
        self._lock = threading.Lock()

    # -- recording -------------------------------------------------------------------------------------------
    def receive(self, record: SyncRecord) -> BaseException | None:
        with self._lock:
            self._syncs.append(record)
        return None

    def is_violation(self, record: SyncRecord) -> bool:
        return not record.allowed and (self.include_latent or not record.latent)

    # -- results ---------------------------------------------------------------------------------------------
    @property
    def syncs(self) -> list[SyncRecord]:
        """Every record so far, allowed and latent ones included, in the order they happened."""
        with self._lock:
            return list(self._syncs)

    @property
    def violations(self) -> list[SyncRecord]:
        """Records that are neither in an ``allow_syncs`` region nor (with ``latent=False``) latent."""
        return [record for record in self.syncs if self.is_violation(record)]

    def count(self, code: str | None = None) -> int:
        """Number of violations, all rules or only ``code`` (e.g. ``"SH101"``)."""
        return sum(1 for record in self.violations if code is None or record.rule == code)

    def by_site(self) -> list[SyncSite]:
        """Violations grouped by rule, op and user line, most frequent first."""
        return group_by_site(self.violations)

    def clear(self) -> None:
        with self._lock:
            self._syncs.clear()

    # -- context manager -------------------------------------------------------------------------------------
    def __enter__(self) -> Watch:
        INSTALLATION.acquire()
        try:
            state.push(self, track_every_op=INSTALLATION.tracks_sync_debug)
        except BaseException:
            INSTALLATION.release()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        try:
            state.pop(self)
        finally:
            INSTALLATION.release()


class Forbid(Watch):
    """Raises :class:`SyncError` for the region's syncs: at exit with all of them, or at the first one."""

    def __init__(self, *, raise_at: Literal["exit", "first"] = "exit", skip_modules: Iterable[str] = (),
                 stack_depth: int = 24, latent: bool = True) -> None:
        if raise_at not in ("exit", "first"):
            raise UsageError(f"raise_at must be 'exit' or 'first', not {raise_at!r}")
        super().__init__(skip_modules=skip_modules, stack_depth=stack_depth, latent=latent)
        self.raise_at = raise_at
        self._per_thread = threading.local()  # depth and this entry's violations, per entering thread

    def receive(self, record: SyncRecord) -> BaseException | None:
        super().receive(record)
        if not self.is_violation(record):
            return None
        if self.raise_at == "first":
            return SyncError([record])
        self._per_thread.pending.append(record)
        return None

    def __enter__(self) -> Forbid:
        depth = getattr(self._per_thread, "depth", 0)
        if depth == 0:
            self._per_thread.pending = []
        self._per_thread.depth = depth + 1
        super().__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        super().__exit__(exc_type, exc, traceback)
        self._per_thread.depth -= 1
        if self._per_thread.depth > 0:
            return
        pending, self._per_thread.pending = self._per_thread.pending, []
        # An exception already on its way out (including a SyncError raised at the first sync) wins.
        if pending and exc_type is None:
            raise SyncError(pending)


class AllowSyncs(ContextDecorator):
    """Syncs in this region are recorded with ``allowed=True`` and the reason, and never raised."""

    def __init__(self, reason: str) -> None:
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError("allow_syncs() needs a reason, e.g. allow_syncs(reason='one read per step')")
        self.reason = reason

    def __enter__(self) -> AllowSyncs:
        state.STATE.allow_reasons.append(self.reason)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        state.STATE.allow_reasons.pop()


def watch(*, skip_modules: Iterable[str] = (), stack_depth: int = 24, latent: bool = True) -> Watch:
    """Record the syncs of the calling thread: ``with watch() as w: ...`` then ``w.syncs``, ``w.count()``."""
    return Watch(skip_modules=skip_modules, stack_depth=stack_depth, latent=latent)


def forbid_syncs(*, raise_at: Literal["exit", "first"] = "exit", skip_modules: Iterable[str] = (),
                 stack_depth: int = 24, latent: bool = True) -> Forbid:
    """Raise :class:`SyncError` listing every sync of the region (at exit), or at the first one."""
    return Forbid(raise_at=raise_at, skip_modules=skip_modules, stack_depth=stack_depth, latent=latent)


def allow_syncs(*, reason: str) -> AllowSyncs:
    """Exempt a region inside ``forbid_syncs()`` / ``watch()``: its syncs are recorded as allowed."""
    return AllowSyncs(reason)
