"""What the annotated trace marks: one typed record per sync, independent of the analysis model."""

from __future__ import annotations

import msgspec


class WaitTarget(msgspec.Struct, frozen=True):
    """A device activity a sync waited for, where it sits in the trace (its event's pid, tid and times)."""

    pid: int | str
    tid: int | str
    ts_us: float
    dur_us: float
    name: str


class SyncMark(msgspec.Struct, frozen=True):
    """One sync: where the blocked thread waited (``pid``/``tid``, ``ts_us`` for ``dur_us``), why (``rule``,
    ``title``, ``fix``), from where (``call_site``: ``file:line function`` when known) and what it cost."""

    ts_us: float
    dur_us: float
    pid: int | str
    tid: int | str
    rule: str
    title: str
    fix: str
    stall_us: float
    call_site: str | None = None
    op: str | None = None
    idle_us: float | None = None
    waited_on: tuple[WaitTarget, ...] = ()
