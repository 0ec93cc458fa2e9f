"""What detection finds: one typed record per sync, and the blocking calls it set aside with the reason."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import msgspec

from synchunt.modes import Mode

if TYPE_CHECKING:
    import pandas as pd


class DetectedSync(msgspec.Struct, frozen=True):
    """One sync. ``event`` is the row (in ``trace.events``) of the op that caused it, or of the blocking call
    itself when no catalogue op encloses it; ``runtime_events`` are the blocking calls it is made of."""

    event: int
    rule: str
    confirmed: bool
    op: str
    runtime: str
    runtime_events: tuple[int, ...]
    ts_us: float
    stall_us: float
    stall_source: str
    direction: str | None
    pid: int | str
    tid: int | str


class SetAside(msgspec.Struct, frozen=True):
    """A blocking call or host read that is not the target's sync (the profiler's own device synchronize, a read
    inside a reviewed host-by-design torch function), kept so that the output can say it was set aside and why.
    ``thread`` is the thread's name, once attribution knows it."""

    event: int
    runtime: str
    ts_us: float
    stall_us: float
    pid: int | str | None
    tid: int | str | None
    reason: str
    thread: str = ""


DETECTED_COLUMNS = list(DetectedSync.__struct_fields__)


class Detection(msgspec.Struct, frozen=True, eq=False, dict=True):
    mode: Mode
    records: tuple[DetectedSync, ...]
    set_aside: tuple[SetAside, ...] = ()

    @cached_property
    def syncs(self) -> pd.DataFrame:
        """The records as a DataFrame (``DETECTED_COLUMNS``), for pandas users."""
        import pandas as pd

        return pd.DataFrame([msgspec.structs.astuple(r) for r in self.records], columns=DETECTED_COLUMNS)
