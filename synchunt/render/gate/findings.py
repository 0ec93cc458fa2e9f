"""The gate result as findings, the form the SARIF and GitHub renderers take: one per call site and rule of the counted
syncs, plus one problem per stale or expired baseline entry, located at the entry in the baseline file."""

from __future__ import annotations

from collections import Counter

from synchunt.attribute import Sync
from synchunt.findings import Confidence, Finding, Severity
from synchunt.gate.evaluate import EntryUsage, GateResult
from synchunt.render.text import label
from synchunt.render.units import compress_scopes, format_us
from synchunt.rules import get_rule

STALE_CODE = "baseline-stale"
EXPIRED_CODE = "baseline-expired"
NO_EVIDENCE_CODE = "nothing-to-judge"


def gate_findings(result: GateResult) -> list[Finding]:
    """Counted syncs are errors when the gate is over budget, warnings when within it (still worth a look); a
    trace without evidence is an error problem located at the trace."""
    if not result.judged:
        return [Finding(NO_EVIDENCE_CODE, f"nothing to judge: {reason}", _evidence_path(reason, result), 1,
                        severity=Severity.ERROR, is_problem=True) for reason in result.missing_evidence]
    findings = _sync_findings(result.counted, Severity.ERROR if result.over_budget else Severity.WARNING)
    severity = Severity.ERROR if result.strict else Severity.WARNING
    findings.extend(_baseline_finding(usage, result, severity) for usage in result.baseline_problems)
    return sorted(findings, key=lambda finding: finding.sort_key)


def _sync_findings(syncs: tuple[Sync, ...], severity: Severity) -> list[Finding]:
    groups: dict[tuple[str, str], list[Sync]] = {}
    for sync in syncs:
        groups.setdefault((sync.site_key, sync.rule), []).append(sync)
    findings = []
    for (_, code), group in sorted(groups.items()):
        first = group[0]
        site = first.call_site
        findings.append(Finding(
            code=code,
            message=_message(group, code, site is not None),
            # Without a Python frame the only place to point at is the trace the sync was found in.
            path=site.file if site else first.trace,
            line=max(site.line, 1) if site else 1,
            severity=severity,
            confidence=Confidence.HIGH if any(s.confirmed for s in group) else Confidence.MEDIUM,
            scope=site.function if site else None,
        ))
    return findings


def _message(group: list[Sync], code: str, has_frame: bool) -> str:
    rule = get_rule(code)
    confirmed = sum(1 for s in group if s.confirmed)
    evidence = [f"{count} {name}" for count, name in ((confirmed, "confirmed"), (len(group) - confirmed, "latent"))
                if count]
    noun = "sync" if len(group) == 1 else "syncs"
    ops = ", ".join(sorted({label(s.op) for s in group}))
    threads = ", ".join(sorted({label(s.thread.name) for s in group}))
    text = (f"{' + '.join(evidence)} {noun} ({rule.code} {rule.name}: {ops}) on {threads}, "
            f"stall {format_us(sum(s.stall_us for s in group))}")
    scopes = compress_scopes(dict(Counter(s.scope for s in group if s.scope)), limit=3)
    if scopes:
        text += f"; scopes {label('; '.join(scopes))}"
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


def _evidence_path(reason: str, result: GateResult) -> str:
    return next((info.path for info in result.analysis.traces if reason.startswith(f"{info.path}:")),
                result.analysis.traces[0].path if result.analysis.traces else "synchunt")
