"""The gate result as findings (for the SARIF and GitHub renderers): one per call site and rule of the counted
syncs, plus one problem per stale or expired baseline entry, located at the entry in the baseline file."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from synchunt.attribute.verdict import compress_scopes, format_us
from synchunt.gate.baseline import NO_FRAME_SITE, call_site_key
from synchunt.gate.evaluate import EntryUsage, GateResult
from synchunt.output import Confidence, Finding, Severity
from synchunt.rules import get_rule

STALE_CODE = "baseline-stale"
EXPIRED_CODE = "baseline-expired"


def gate_findings(result: GateResult) -> list[Finding]:
    """Counted syncs are errors when the gate is over budget, warnings when within it (still worth a look)."""
    findings = _sync_findings(result.counted, Severity.ERROR if result.over_budget else Severity.WARNING)
    severity = Severity.ERROR if result.strict else Severity.WARNING
    findings.extend(_baseline_finding(usage, result, severity) for usage in result.baseline_problems)
    return sorted(findings, key=lambda finding: finding.sort_key)


def describe_sync(row: Any) -> str:
    """One line per sync for listings: ``SH101 aten::nonzero at file:line function [scope] (latent, 49.8 µs)``."""
    where = f"{row.file}:{row.line} {row.function}" if isinstance(row.file, str) and row.file else NO_FRAME_SITE
    scope = f" [{row.scope}]" if row.scope else ""
    evidence = "confirmed" if row.confirmed else "latent"
    return f"{row.rule} {row.op} at {where}{scope} ({evidence}, {format_us(float(row.stall_us))})"


def _sync_findings(syncs: pd.DataFrame, severity: Severity) -> list[Finding]:
    if syncs.empty:
        return []
    findings = []
    sites = [call_site_key(file, function) for file, function in zip(syncs["file"], syncs["function"], strict=True)]
    for (_site, code), group in syncs.groupby([pd.Series(sites, index=syncs.index), syncs["rule"]], sort=True):
        first = group.iloc[0]
        has_frame = isinstance(first["file"], str) and bool(first["file"])
        findings.append(Finding(
            code=code,
            message=_message(group, code, has_frame),
            # Without a Python frame the only place to point at is the trace the sync was found in.
            path=first["file"] if has_frame else str(first["trace"]),
            line=int(first["line"]) if has_frame and pd.notna(first["line"]) else 1,
            severity=severity,
            confidence=Confidence.HIGH if bool(group["confirmed"].any()) else Confidence.MEDIUM,
            scope=first["function"] if has_frame else None,
        ))
    return findings


def _message(group: pd.DataFrame, code: str, has_frame: bool) -> str:
    rule = get_rule(code)
    confirmed = int(group["confirmed"].sum())
    evidence = [f"{count} {name}" for count, name in ((confirmed, "confirmed"), (len(group) - confirmed, "latent"))
                if count]
    noun = "sync" if len(group) == 1 else "syncs"
    ops = ", ".join(sorted(set(group["op"])))
    threads = ", ".join(sorted(set(group["thread"].astype(str))))
    text = (f"{' + '.join(evidence)} {noun} ({rule.code} {rule.name}: {ops}) on {threads}, "
            f"stall {format_us(float(group['stall_us'].sum()))}")
    scopes = compress_scopes(dict(Counter(scope for scope in group["scope"] if scope)), limit=3)
    if scopes:
        text += f"; scopes {'; '.join(scopes)}"
    if not has_frame:
        text += "; no Python frame recorded (profile with with_stack=True to find the line)"
    return f"{text}. Fix: {rule.fix}"


def _baseline_finding(usage: EntryUsage, result: GateResult, severity: Severity) -> Finding:
    entry = usage.entry
    if usage.stale:
        code, message = STALE_CODE, f"baseline entry for {entry.key} matched no sync; remove it"
        if usage.expired:
            message += f" (it also expired on {entry.expires})"
    else:
        code = EXPIRED_CODE
        message = f"baseline entry for {entry.key} expired on {entry.expires} ({usage.matched} syncs still match)"
    return Finding(code=code, message=message, path=result.baseline_path or "baseline", line=entry.line or 1,
                   severity=severity, is_problem=True)
