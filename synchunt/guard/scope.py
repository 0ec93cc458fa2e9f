"""Who a guard watches: the thread *and* the asyncio task that entered it.

Active guards live in a ``ContextVar``, so each asyncio task (which runs in its own context) sees only its own
guards. A task created inside a guarded block inherits a copy of that context, so every entry also records
the thread and task that made it and only counts there. Exiting marks the entry inactive wherever the context
went (a generator closed in another task, contexts left out of order): an inactive entry never counts again.

Nested-call flags (``suppress``, ``in_reported``) describe the current C++ → Python call stack, which an
``await`` cannot interrupt, so they are plain thread-locals.
"""

from __future__ import annotations

import threading
from asyncio import current_task
from asyncio.events import _get_running_loop
from contextvars import ContextVar
from dataclasses import dataclass, field
from threading import get_ident
from typing import Protocol

from synchunt.guard.frames import UserFrames
from synchunt.guard.records import SyncRecord


class Recorder(Protocol):
    """What a guard offers: its frame filter and a sink that may hand back an error to raise."""

    frame_filter: UserFrames

    def receive(self, record: SyncRecord) -> BaseException | None: ...


ScopeKey = tuple[int, object]  # (thread ident, asyncio task or None, or ANY_TASK)
ANY_TASK = "any task"  # an entry's task for a guard that counts every task of its thread


def scope_key() -> ScopeKey:
    """The calling thread and, inside a running event loop, its current task."""
    loop = _get_running_loop()
    return threading.get_ident(), (current_task(loop) if loop is not None else None)


def entry_key(all_tasks: bool) -> ScopeKey:
    """The key a guard entered here counts under."""
    key = scope_key()
    return (key[0], ANY_TASK) if all_tasks else key


def covers(entry: ScopeKey, key: ScopeKey) -> bool:
    """Whether a guard entered under ``entry`` counts the syncs of ``key``'s thread and task."""
    return entry[0] == key[0] and (entry[1] is key[1] or entry[1] == ANY_TASK)


@dataclass(eq=False)
class Entry:
    """One ``__enter__`` of one guard."""

    recorder: Recorder
    key: ScopeKey
    active: bool = True


@dataclass(eq=False)
class AllowMarker:
    """One ``__enter__`` of one ``allow_syncs`` region."""

    reason: str
    key: ScopeKey = field(default_factory=scope_key)
    active: bool = True


_ENTRIES: ContextVar[tuple[Entry, ...]] = ContextVar("synchunt_guard_entries", default=())
_ALLOWED: ContextVar[tuple[AllowMarker, ...]] = ContextVar("synchunt_guard_allowed", default=())


class CallFlags(threading.local):
    def __init__(self) -> None:
        # > 0 inside a patched method that reports its own sync: the ops it dispatches are that same sync
        self.suppress = 0
        # > 0 while a reported op runs: a sync-debug warning it triggers is that same sync
        self.in_reported = 0
        # > 0 inside Tensor.__bool__: the scalar read it makes is tensor truthiness, not a value read
        self.truthiness = 0


FLAGS = CallFlags()


def push(recorder: Recorder, *, all_tasks: bool = False) -> Entry:
    entry = Entry(recorder, entry_key(all_tasks))
    _ENTRIES.set((*_ENTRIES.get(), entry))
    return entry


def remove(entry: Entry) -> None:
    """Deactivate ``entry`` (for good) and drop it from the current context if it is there."""
    entry.active = False
    entries = _ENTRIES.get()
    if entries and entries[-1] is entry:  # the innermost: left in order, the common case
        _ENTRIES.set(entries[:-1])
    elif any(candidate is entry for candidate in entries):
        _ENTRIES.set(tuple(candidate for candidate in entries if candidate is not entry))


def active_entries() -> tuple[Entry, ...]:
    """The entries that count for the calling thread and task, outermost first.

    Every guarded op asks this, so the one-entry case (one guard, the common one) builds nothing."""
    entries = _ENTRIES.get()
    if not entries:
        return ()
    loop = _get_running_loop()
    thread, task = get_ident(), (current_task(loop) if loop is not None else None)
    if len(entries) == 1:
        entry = entries[0]
        key = entry.key
        counts = entry.active and key[0] == thread and (key[1] is task or key[1] == ANY_TASK)
        return entries if counts else ()
    return tuple(entry for entry in entries
                 if entry.active and entry.key[0] == thread and (entry.key[1] is task or entry.key[1] == ANY_TASK))


def push_allowed(reason: str) -> AllowMarker:
    marker = AllowMarker(reason)
    _ALLOWED.set((*_ALLOWED.get(), marker))
    return marker


def remove_allowed(marker: AllowMarker) -> None:
    marker.active = False
    markers = _ALLOWED.get()
    if any(candidate is marker for candidate in markers):
        _ALLOWED.set(tuple(candidate for candidate in markers if candidate is not marker))


def allow_reason() -> str | None:
    """The innermost ``allow_syncs`` reason of the calling thread and task, if any."""
    markers = _ALLOWED.get()
    if not markers:
        return None
    key = scope_key()
    for marker in reversed(markers):
        if marker.active and marker.key == key:
            return marker.reason
    return None


def is_guarded() -> bool:
    """True when the calling thread and task are inside at least one guard."""
    return bool(active_entries())
