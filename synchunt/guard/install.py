"""Entering and leaving guards: which threads are armed, and what is installed process-wide.

The route (kernels or dispatch mode) and the Python patches are installed while any thread is armed and
removed with the last one. A thread is armed while it has an active guard entry. A guard left from another
thread (a generator resumed elsewhere) cannot clear the entering thread's thread-local dispatch state: that
thread is marked stale, stops counting at once (the entry is inactive), and is disarmed the next time it
dispatches a guarded op or enters or leaves a guard.
"""

from __future__ import annotations

import os
import threading
import warnings
from dataclasses import dataclass
from typing import Protocol

import torch

from synchunt.guard import scope
from synchunt.guard.classify import build_table, library_packets_loaded
from synchunt.guard.kernels import KernelRoute, Table
from synchunt.guard.mode import ModeRoute
from synchunt.guard.patches import Patches
from synchunt.rules.reviewed import NOT_HOST_SYNCS

ROUTE_VARIABLE = "SYNCHUNT_GUARD_ROUTE"


class Route(Protocol):
    name: str

    def install(self) -> None: ...

    def uninstall(self) -> None: ...

    def arm(self) -> object: ...

    def disarm(self, token: object) -> None: ...

    def still_armed(self) -> bool: ...


@dataclass(eq=False)
class _Arm:
    thread: threading.Thread
    token: object
    entries: int = 0
    stale: bool = False
    switched_off: bool = False  # found disarmed by something else (said once)


_SWITCHED_OFF = ("synchunt guard: this thread's guard was switched off inside the block (a pre-dispatch trace, "
                 "such as torch.export, clears the PreDispatch key when it ends): what ran after it was not checked; "
                 "export outside the guarded block")


def _reviewed_overloads() -> tuple[torch._ops.OpOverload, ...]:
    overloads = []
    for entry in NOT_HOST_SYNCS:
        packet = getattr(torch.ops.aten, entry.packet, None)
        if packet is not None:
            overloads.extend(getattr(packet, name) for name in packet.overloads())
    return tuple(overloads)


class Session:
    """Process-wide guard bookkeeping (one instance, :data:`SESSION`)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._arms: dict[int, _Arm] = {}
        self._table: Table | None = None
        self._libraries: frozenset[str] = frozenset()  # the library ops (torchvision::nms) the table has
        self._route: Route | None = None
        self._kernels: KernelRoute | None = None  # kept between guards: its registration is the costly part
        self._patches: Patches | None = None

    @property
    def route_name(self) -> str | None:
        """The installed route (``"kernels"`` or ``"mode"``), ``None`` when nothing is installed."""
        return self._route.name if self._route is not None else None

    @property
    def installed(self) -> bool:
        return self._route is not None

    def enter(self, recorder: scope.Recorder, *, all_tasks: bool = False) -> scope.Entry:
        ident = threading.get_ident()
        with self._lock:
            arm = self._heal(ident)
            if self._route is None:
                self._install()
            if arm is None:
                assert self._route is not None
                arm = self._arms[ident] = _Arm(threading.current_thread(), self._route.arm())
            arm.entries += 1
            arm.stale = False
        return scope.push(recorder, all_tasks=all_tasks)

    def exit(self, entry: scope.Entry) -> None:
        scope.remove(entry)
        ident = threading.get_ident()
        with self._lock:
            thread = entry.key[0]
            arm = self._arms.get(thread)
            if arm is not None and thread == ident and not arm.switched_off and self._route is not None \
                    and not self._route.still_armed():
                arm.switched_off = True
                warnings.warn(_SWITCHED_OFF, RuntimeWarning, stacklevel=3)
            if arm is not None:
                arm.entries -= 1
                if arm.entries <= 0:
                    if thread == ident:
                        self._disarm(thread)
                    else:
                        arm.stale = True
            if thread != ident:
                self._heal(ident)
            if self._arms:  # other threads still armed: those that died left their arms behind
                self._drop_dead_threads()
            if not self._arms:
                self._uninstall()

    def idle(self) -> None:
        """Called by a guarded op on a thread with no active guard: disarm it if its guard left elsewhere."""
        arm = self._arms.get(threading.get_ident())
        if arm is not None and arm.stale:
            with self._lock:
                self._heal(threading.get_ident())
                if not self._arms:
                    self._uninstall()  # safe inside a kernel: the kernels themselves stay registered

    # -- internals -------------------------------------------------------------------------------------------
    def _heal(self, ident: int) -> _Arm | None:
        """Disarm thread ``ident`` if its guard was left from another thread; its arm, if it still has one."""
        arm = self._arms.get(ident)
        if arm is not None and arm.stale and arm.entries <= 0:
            self._disarm(ident)
            return None
        return arm

    def _disarm(self, ident: int) -> None:
        arm = self._arms.pop(ident)
        if self._route is not None:
            self._route.disarm(arm.token)

    def _drop_dead_threads(self) -> None:
        for ident, arm in list(self._arms.items()):
            if not arm.thread.is_alive():  # its thread-local state died with it
                del self._arms[ident]

    def remove_kernels(self) -> bool:
        """Unregister the kernel route's kernels (they stay registered between guards); False while installed."""
        with self._lock:
            if self._route is not None:
                return False
            if self._kernels is not None:
                self._kernels.remove_kernels()
            return True

    def _install(self) -> None:
        libraries = library_packets_loaded()
        if self._table is None or libraries != self._libraries:  # first guard, or a library op loaded since
            self._table, self._libraries = build_table(libraries), libraries
            if self._kernels is not None:
                self._kernels.remove_kernels()
                self._kernels = None
        route = self._make_route(self._table)
        self._patches = Patches()
        self._route = route

    def _make_route(self, table: Table) -> Route:
        if os.environ.get(ROUTE_VARIABLE, "kernels") == "mode":
            return ModeRoute(table)
        if self._kernels is None:
            self._kernels = KernelRoute(table, _reviewed_overloads(), self.idle)
        try:
            self._kernels.install()
        except RuntimeError as error:  # a torch build without Python kernels at PreDispatch
            warnings.warn(f"synchunt guard: falling back to a dispatch mode ({error})", RuntimeWarning,
                          stacklevel=3)
            return ModeRoute(table)
        return self._kernels

    def _uninstall(self) -> None:
        route, self._route = self._route, None
        patches, self._patches = self._patches, None
        if patches is not None:
            patches.undo()
        if route is not None:
            route.uninstall()


SESSION = Session()
