"""DataFrame views of the analysis model, for pandas users (built column by column, not a dict per row).

The per-sync columns are the ones :data:`synchunt.attribute.fields.COLUMNS` declares; the per-site columns are the
fields of :class:`~synchunt.attribute.model.SiteSummary`, nested values as plain Python objects.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pandas as pd

from synchunt.attribute.fields import COLUMNS
from synchunt.attribute.model import SiteSummary, Sync

SYNC_COLUMNS = [column.name for column in COLUMNS]
SITE_COLUMNS = list(SiteSummary.__struct_fields__)
_SITE_DTYPES = {"line": "Int64", "device_idle_us": "Float64", "max_idle_us": "Float64",
                "collective_delay_us": "Float64"}


def syncs_frame(records: tuple[Sync, ...]) -> pd.DataFrame:
    """One row per sync. Integer columns are nullable (never a float with NaN); lists are Python lists."""
    data = {}
    for column in COLUMNS:
        values = [column.value(record) for record in records]
        data[column.name] = values if column.dtype is None else pd.array(values, dtype=column.dtype)
    return pd.DataFrame(data, columns=SYNC_COLUMNS)


def sites_frame(sites: tuple[SiteSummary, ...]) -> pd.DataFrame:
    """One row per call site."""
    data: dict[str, Any] = {}
    for name in SITE_COLUMNS:
        values = [_plain(getattr(site, name)) for site in sites]
        data[name] = pd.array(values, dtype=_SITE_DTYPES[name]) if name in _SITE_DTYPES else values
    return pd.DataFrame(data, columns=SITE_COLUMNS)


def _plain(value: Any) -> Any:
    """Structs and tuples as the builtins pandas users expect (dicts and lists)."""
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value
