"""The runtime guard: find the exact line of each device-to-host sync, on a laptop without a GPU.

``with watch() as w:`` records, ``forbid_syncs()`` raises :class:`SyncError`, ``allow_syncs(reason=...)``
exempts a region. Ops are classified at dispatch level from the rule catalogue (``synchunt.rules``), by op and
arguments rather than by device, so a CPU run reports the syncs a GPU run would make (as ``latent``).
"""

from __future__ import annotations

from synchunt.guard.api import AllowSyncs, Forbid, Watch, allow_syncs, forbid_syncs, watch
from synchunt.guard.frames import DEFAULT_SKIP_MODULES
from synchunt.guard.records import (
    SiteCount,
    SyncError,
    SyncRecord,
    format_syncs,
    group_by_site,
    summarize_rules,
)
from synchunt.guard.scope import is_guarded

__all__ = [
    "DEFAULT_SKIP_MODULES",
    "AllowSyncs",
    "Forbid",
    "SiteCount",
    "SyncError",
    "SyncRecord",
    "Watch",
    "allow_syncs",
    "forbid_syncs",
    "format_syncs",
    "group_by_site",
    "is_guarded",
    "summarize_rules",
    "watch",
]
