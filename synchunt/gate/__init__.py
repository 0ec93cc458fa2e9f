"""The CI gate: a sync budget over an analysis and a reviewed baseline (allow-list) of accepted syncs. Its result
is rendered by ``synchunt.render.gate`` (text, GitHub workflow commands, SARIF, JUnit XML, JSON)."""

from synchunt.gate.baseline import (
           BASELINE_SCHEMA,
           Baseline,
           BaselineEntry,
           SyncKey,
           load_baseline,
           parse_baseline,
           sync_key,
)
from synchunt.gate.baseline_write import baseline_from_syncs, render_baseline, write_baseline
from synchunt.gate.evaluate import ALL_SCOPES, EntryUsage, GateResult, ThreadScope, evaluate

__all__ = [
           "ALL_SCOPES",
           "BASELINE_SCHEMA",
           "Baseline",
           "BaselineEntry",
           "EntryUsage",
           "GateResult",
           "SyncKey",
           "ThreadScope",
           "baseline_from_syncs",
           "evaluate",
           "load_baseline",
           "parse_baseline",
           "render_baseline",
           "sync_key",
           "write_baseline",
]
