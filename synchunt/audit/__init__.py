"""The audit matrix: every registered path, bad and fixed, under the profiler and under the runtime guard."""

from synchunt.audit.agreement import compare_signals, trace_can_see
from synchunt.audit.model import SCHEMA, Agreement, AuditResult, Cell, Signal
from synchunt.audit.run import audit_cell, run_audit

__all__ = ["SCHEMA", "Agreement", "AuditResult", "Cell", "Signal", "audit_cell", "compare_signals",
           "run_audit", "trace_can_see"]
