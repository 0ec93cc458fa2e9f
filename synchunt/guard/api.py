"""The public guards: ``watch()`` records, ``forbid_syncs()`` raises, ``allow_syncs()`` exempts a region.

Each is a context manager and a decorator. A guard checks only the thread and asyncio task that entered it;
nested guards in one task all receive the same syncs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from contextlib import ContextDecorator
from types import TracebackType
from typing import Literal

from synchunt.errors import UsageError
from synchunt.guard import scope
from synchunt.guard.frames import UserFrames
from synchunt.guard.install import SESSION
from synchunt.guard.records import SiteCount, SyncError, SyncRecord, group_by_site


class Watch(ContextDecorator):
    """Records every sync of the entering thread and task; ``syncs`` accumulates across entries (``clear``).

    ``skip_modules`` adds module prefixes whose frames are library code (besides torch, synchunt, pytest and
    the standard library); ``stack_depth`` caps the user frames kept per record. ``latent=False`` leaves out
    latent syncs (ops on host tensors) from ``violations``, ``count`` and ``by_site``; ``syncs`` keeps them.
    ``all_tasks=True`` counts every asyncio task of the entering thread, not only the entering task.
    """

    def __init__(self, *, skip_modules: Iterable[str] = (), stack_depth: int = 24,
                 latent: bool = True, all_tasks: bool = False) -> None:
        self.frame_filter = UserFrames.with_extra(skip_modules, max_depth=stack_depth)
        self.include_latent = latent
        self.all_tasks = all_tasks
        self._syncs: list[SyncRecord] = []
        self._lock = threading.Lock()
        self._open: list[scope.Entry] = []  # entries not yet exited, in entry order

    # -- recording -------------------------------------------------------------------------------------------
    def receive(self, record: SyncRecord) -> BaseException | None:
        with self._lock:
            self._syncs.append(record)
        return None

    def is_violation(self, record: SyncRecord) -> bool:
        return not record.allowed and record.counts and (self.include_latent or not record.latent)

    # -- results ---------------------------------------------------------------------------------------------
    @property
    def syncs(self) -> list[SyncRecord]:
        """Every record so far, allowed and latent ones included, in the order they happened."""
        with self._lock:
            return list(self._syncs)

    @property
    def violations(self) -> list[SyncRecord]:
        """Records that are neither in an ``allow_syncs`` region, nor (with ``latent=False``) latent, nor host-resident
        under the shadow device."""
        return [record for record in self.syncs if self.is_violation(record)]

    def count(self, code: str | None = None) -> int:
        """Number of violations, all rules or only ``code`` (e.g. ``"SH101"``)."""
        return sum(1 for record in self.violations if code is None or record.rule == code)

    def by_site(self) -> list[SiteCount]:
        """Violations grouped by rule, op and user line, most frequent first."""
        return group_by_site(self.violations)

    def clear(self) -> None:
        with self._lock:
            self._syncs.clear()

    # -- context manager -------------------------------------------------------------------------------------
    def __enter__(self) -> Watch:
        entry = SESSION.enter(self, all_tasks=self.all_tasks)
        with self._lock:
            self._open.append(entry)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        entry = self._take_open_entry()
        if entry is not None:
            SESSION.exit(entry)

    def _take_open_entry(self) -> scope.Entry | None:
        """The latest entry this thread and task opened; else the latest of any (a generator closed elsewhere)."""
        key = scope.scope_key()
        with self._lock:
            for position in range(len(self._open) - 1, -1, -1):
                if scope.covers(self._open[position].key, key):
                    return self._open.pop(position)
            return self._open.pop() if self._open else None


class Forbid(Watch):
    """Raises :class:`SyncError` for the region's syncs: at exit with all of them, or at the first one."""

    def __init__(self, *, raise_at: Literal["exit", "first"] = "exit", skip_modules: Iterable[str] = (),
                 stack_depth: int = 24, latent: bool = True, all_tasks: bool = False) -> None:
        if raise_at not in ("exit", "first"):
            raise UsageError(f"raise_at must be 'exit' or 'first', not {raise_at!r}")
        super().__init__(skip_modules=skip_modules, stack_depth=stack_depth, latent=latent, all_tasks=all_tasks)
        self.raise_at = raise_at
        self._regions: dict[scope.ScopeKey, _Region] = {}  # per entering thread and task

    def receive(self, record: SyncRecord) -> BaseException | None:
        super().receive(record)
        if not self.is_violation(record):
            return None
        if self.raise_at == "first":
            return SyncError([record])
        key = scope.scope_key()
        with self._lock:
            region = self._regions.get(key) or self._regions.get((key[0], scope.ANY_TASK))
            if region is not None:
                region.pending.append(record)
        return None

    def __enter__(self) -> Forbid:
        with self._lock:
            self._regions.setdefault(scope.entry_key(self.all_tasks), _Region()).depth += 1
        super().__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        entry = self._take_open_entry()
        if entry is None:
            return
        SESSION.exit(entry)
        with self._lock:
            region = self._regions.get(entry.key)
            if region is None:
                return
            region.depth -= 1
            if region.depth > 0:
                return
            del self._regions[entry.key]
        # An exception already on its way out (including a SyncError raised at the first sync) wins.
        if region.pending and exc_type is None:
            raise SyncError(region.pending)


class _Region:
    """One outermost ``forbid_syncs`` region of one thread and task: its nesting depth and violations."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending: list[SyncRecord] = []


class AllowSyncs(ContextDecorator):
    """Syncs in this region are recorded with ``allowed=True`` and the reason, and never raised."""

    def __init__(self, reason: str) -> None:
        if not isinstance(reason, str) or not reason.strip():
            raise UsageError("allow_syncs() needs a reason, e.g. allow_syncs(reason='one read per step')")
        self.reason = reason
        self._markers: list[scope.AllowMarker] = []
        self._lock = threading.Lock()

    def __enter__(self) -> AllowSyncs:
        marker = scope.push_allowed(self.reason)
        with self._lock:
            self._markers.append(marker)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        key = scope.scope_key()
        with self._lock:
            mine = [marker for marker in self._markers if marker.key == key] or self._markers[-1:]
            if not mine:
                return
            self._markers.remove(mine[-1])
        scope.remove_allowed(mine[-1])


def watch(*, skip_modules: Iterable[str] = (), stack_depth: int = 24, latent: bool = True,
          all_tasks: bool = False) -> Watch:
    """Record the syncs of the calling thread and task: ``with watch() as w: ...``, then ``w.syncs``."""
    return Watch(skip_modules=skip_modules, stack_depth=stack_depth, latent=latent, all_tasks=all_tasks)


def forbid_syncs(*, raise_at: Literal["exit", "first"] = "exit", skip_modules: Iterable[str] = (),
                 stack_depth: int = 24, latent: bool = True, all_tasks: bool = False) -> Forbid:
    """Raise :class:`SyncError` listing every sync of the region (at exit), or at the first one."""
    return Forbid(raise_at=raise_at, skip_modules=skip_modules, stack_depth=stack_depth, latent=latent,
                  all_tasks=all_tasks)


def allow_syncs(*, reason: str) -> AllowSyncs:
    """Exempt a region inside ``forbid_syncs()`` / ``watch()``: its syncs are recorded as allowed."""
    return AllowSyncs(reason)
