"""The CI gate: a sync budget over an analysis, a reviewed baseline (allow-list) of accepted syncs, and the
gate's result rendered as text, GitHub workflow commands, SARIF or JUnit XML."""

from synchunt.gate.baseline import (
    BASELINE_SCHEMA,
    NO_FRAME_SITE,
    Baseline,
    BaselineEntry,
    SyncKey,
    load_baseline,
    parse_baseline,
    sync_key,
)
from synchunt.gate.baseline_write import baseline_from_syncs, render_baseline, write_baseline
from synchunt.gate.evaluate import EntryUsage, GateResult, evaluate
from synchunt.gate.findings import gate_findings
from synchunt.gate.junit import gate_suite, render_gate_junit
from synchunt.gate.render import DOCUMENT_FORMATS, render_gate_document
from synchunt.gate.text import render_gate_text

__all__ = ["BASELINE_SCHEMA", "DOCUMENT_FORMATS", "NO_FRAME_SITE", "Baseline", "BaselineEntry", "EntryUsage",
           "GateResult", "SyncKey", "baseline_from_syncs", "evaluate", "gate_findings", "gate_suite",
           "load_baseline", "parse_baseline", "render_baseline", "render_gate_document", "render_gate_junit",
           "render_gate_text", "sync_key", "write_baseline"]
