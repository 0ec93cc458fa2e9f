"""The registered workloads: whatever installed packages declare in the ``synchunt.workloads`` entry-point group.

An entry point names a :class:`Workload`, a sequence of them, or a callable returning either, e.g.
``hicache = "synchunt_workloads.hicache_dcp:WORKLOADS"`` under ``[project.entry-points."synchunt.workloads"]``.
synchunt itself ships none: the library never imports a workload package by name.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from synchunt.capture.workload import Workload
from synchunt.errors import TargetError

ENTRY_POINT_GROUP = "synchunt.workloads"

_TABLE: dict[str, Workload] | None = None


def registered_workloads() -> dict[str, Workload]:
    """Every registered workload by name (loads the entry points on first use)."""
    global _TABLE
    if _TABLE is None:
        _TABLE = collect(entry_points(group=ENTRY_POINT_GROUP))
    return _TABLE


def collect(points: Iterable[EntryPoint]) -> dict[str, Workload]:
    """Workloads by name from entry points; a broken plugin or a name registered twice is a :class:`TargetError`."""
    table: dict[str, Workload] = {}
    for point in sorted(points, key=lambda p: p.name):
        try:
            loaded = point.load()
        except Exception as error:  # a plugin that fails to import must not hide the others' names in a traceback
            raise TargetError(f"workload plugin {point.name!r} ({point.value}) failed to load: "
                              f"{type(error).__name__}: {error}") from None
        for workload in _workloads_of(loaded, point):
            if workload.name in table:
                raise TargetError(f"workload name {workload.name!r} registered twice (again by {point.value})")
            table[workload.name] = workload
    return table


def _workloads_of(loaded: Any, point: EntryPoint) -> list[Workload]:
    if callable(loaded) and not isinstance(loaded, Workload):
        loaded = loaded()
    items = [loaded] if isinstance(loaded, Workload) else list(loaded) if isinstance(loaded, Iterable) else [loaded]
    wrong = [item for item in items if not isinstance(item, Workload)]
    if wrong:
        raise TargetError(f"workload plugin {point.name!r} ({point.value}) gave {type(wrong[0]).__name__}, "
                          "not synchunt.capture.Workload")
    return items


def get_workload(name: str, table: Mapping[str, Workload] | None = None) -> Workload:
    """The workload called ``name``; an unknown name is a :class:`TargetError` that suggests the closest ones."""
    table = registered_workloads() if table is None else table
    if name in table:
        return table[name]
    raise TargetError(unknown_name_message("workload", name, table))


def unknown_name_message(what: str, name: str, known: Iterable[str]) -> str:
    """``unknown workload 'hicache-dc'; did you mean 'hicache-dcp'? registered: …``."""
    names = sorted(known)
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    listing = f" registered: {', '.join(names)}" if names else (
        f" none is registered (packages register them in the {ENTRY_POINT_GROUP!r} entry-point group)")
    return f"unknown {what} {name!r}{hint}{';' if not hint else ''}{listing}"
