"""What each sync cost: the device work it waited for, the host stall, the device idle it caused, and, across
ranks, how much later the rank entered its next collective."""

from synchunt.impact.collectives import collective_delays
from synchunt.impact.measure import MAX_WAITED_ON, measure
from synchunt.impact.model import Activity, CollectiveDelay, DeviceIdle, SyncImpact

__all__ = ["MAX_WAITED_ON", "Activity", "CollectiveDelay", "DeviceIdle", "SyncImpact",
           "collective_delays", "measure"]
