"""DataFrame views of the analysis model, for pandas users (built column by column, not a dict per row)."""

from __future__ import annotations

import msgspec
import pandas as pd

from synchunt.attribute.model import SiteSummary, Sync

SYNC_COLUMNS = ["site", "rule", "kind", "confirmed", "op", "op_chain", "runtime", "pid", "tid", "thread", "ts_us",
                "stall_us", "stall_source", "file", "line", "function", "line_source", "stack", "scope",
                "scope_chain", "step", "waited_on", "device_idle_us", "direction", "rank", "trace", "signals",
                "collective_delay_us", "via", "line_note", "phase"]
SITE_COLUMNS = ["site", "key", "file", "line", "function", "line_source", "count", "confirmed", "latent",
                "stall_us", "max_stall_us", "device_idle_us", "max_idle_us", "rules", "ops", "scopes", "threads",
                "collective_delay_us"]


def syncs_frame(records: tuple[Sync, ...]) -> pd.DataFrame:
    """One row per sync. ``line`` is a nullable integer column (never a float); lists are Python lists."""
    sites = [r.call_site for r in records]
    columns = {
        "site": [r.site for r in records], "rule": [r.rule for r in records], "kind": [r.kind for r in records],
        "confirmed": pd.Series([r.confirmed for r in records], dtype=bool),
        "op": [r.op for r in records], "op_chain": [list(r.op_chain) for r in records],
        "runtime": [r.runtime for r in records], "pid": [r.thread.pid for r in records],
        "tid": [r.thread.tid for r in records], "thread": [r.thread.name for r in records],
        "ts_us": pd.array([r.ts_us for r in records], dtype="Float64"),
        "stall_us": pd.Series([r.stall_us for r in records], dtype=float),
        "stall_source": [r.stall_source for r in records],
        "file": [s.file if s else None for s in sites],
        "line": pd.array([s.line if s else None for s in sites], dtype="Int64"),
        "function": [s.function if s else None for s in sites],
        "line_source": [s.line_source if s else None for s in sites],
        "stack": [[msgspec.structs.asdict(f) for f in r.stack] for r in records],
        "scope": [r.scope for r in records], "scope_chain": [list(r.scope_chain) for r in records],
        "step": [r.step for r in records], "waited_on": [r.waited_on for r in records],
        "device_idle_us": pd.array([r.device_idle_us for r in records], dtype="Float64"),
        "direction": [r.direction for r in records],
        "rank": pd.array([r.rank for r in records], dtype="Int64"), "trace": [r.trace for r in records],
        "signals": [list(r.signals) for r in records],
        "collective_delay_us": pd.array([r.collective_delay_us for r in records], dtype="Float64"),
        "via": [r.via.frame.label if r.via is not None else None for r in records],
        "line_note": [s.line_note if s else None for s in sites],
        "phase": [r.phase for r in records],
    }
    return pd.DataFrame(columns, columns=SYNC_COLUMNS)


def sites_frame(sites: tuple[SiteSummary, ...]) -> pd.DataFrame:
    columns = {name: [getattr(s, name) for s in sites] for name in SITE_COLUMNS}
    columns["line"] = pd.array(columns["line"], dtype="Int64")
    for name in ("device_idle_us", "max_idle_us", "collective_delay_us"):
        columns[name] = pd.array(columns[name], dtype="Float64")
    for name in ("rules", "ops", "threads"):
        columns[name] = [list(v) for v in columns[name]]
    return pd.DataFrame(columns, columns=SITE_COLUMNS)
