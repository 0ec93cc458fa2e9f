"""What a sync cost: the work it waited for, the host stall, and the device idle it caused (typed, JSON-friendly).

Every figure is in µs. ``None`` means unknown (a latent sync has no device figures); no field is ever NaN.
"""

from __future__ import annotations

import msgspec


class Activity(msgspec.Struct, frozen=True):
    """One device activity (kernel, copy, memset). ``event`` is its row in ``trace.events``; ``issued_by_sync``
    marks the sync's own copy (the device-to-host read that the blocking call itself queued)."""

    event: int
    name: str
    category: str
    device: int | str
    stream: int
    start_us: float
    dur_us: float
    correlation: int | None
    issued_by_sync: bool = False


class DeviceIdle(msgspec.Struct, frozen=True):
    """The gap on one device after the waited-on work ended (``start_us``) until its next activity (``end_us``).

    ``idle_us`` is the gap charged to the sync: only when the next activity was launched by the blocked thread
    after the sync returned (``charged``); otherwise 0 and ``reason`` says why not.
    """

    device: int | str
    start_us: float
    end_us: float | None
    idle_us: float
    charged: bool
    reason: str
    next_activity: Activity | None = None


class SyncImpact(msgspec.Struct, frozen=True):
    """One sync's impact, aligned with one ``Detection.records`` entry.

    ``waited_on`` keeps the last ``MAX_WAITED_ON`` activities that were in flight on the waited-on stream(s)
    (in start order); ``waited_on_count`` and ``waited_on_us`` (their summed duration) count them all.
    ``scope`` is what the sync waited on: ``"stream"``, ``"device"`` or ``"event"``; ``None`` for latent syncs.
    """

    host_stall_us: float
    device_idle_us: float | None = None
    waited_on: tuple[Activity, ...] = ()
    waited_on_count: int = 0
    waited_on_us: float | None = None
    idle: tuple[DeviceIdle, ...] = ()
    scope: str | None = None
    called_us: float | None = None
    returned_us: float | None = None


class CollectiveDelay(msgspec.Struct, frozen=True):
    """How much later than the earliest rank this rank entered the next collective after a sync.

    ``collective`` is the kernel name, ``ordinal`` its position among this rank's collectives (the key it is
    matched by across ranks), ``delay_us`` = ``start_us`` − ``earliest_start_us`` (≥ 0): how long every peer
    that was already inside the collective waited for this rank.
    """

    rank: int
    collective: str
    ordinal: int
    start_us: float
    earliest_start_us: float
    earliest_rank: int
    delay_us: float
    ranks: int
