"""The gate result as findings, the form the SARIF and GitHub renderers take: one per call site and rule of the counted
syncs, plus one problem per stale or expired baseline entry, located at the entry in the baseline file."""

from __future__ import annotations

from synchunt.attribute import Analysis, SiteSummary
from synchunt.findings import Confidence, Finding, Severity
from synchunt.gate.evaluate import EntryUsage, GateResult
from synchunt.render.text import label
from synchunt.rules import get_rule
from synchunt.sites import compress_scopes
from synchunt.units import format_us

STALE_CODE = "baseline-stale"
EXPIRED_CODE = "baseline-expired"
NO_EVIDENCE_CODE = "nothing-to-judge"


def gate_findings(result: GateResult) -> list[Finding]:
    """Counted syncs are errors when the gate is over budget, warnings when within it (still worth a look); a
    trace without evidence is an error problem located at the trace."""
    if not result.judged:
        return [Finding(NO_EVIDENCE_CODE, f"nothing to judge: {reason}", _evidence_path(reason, result), 1,
                        severity=Severity.ERROR, is_problem=True) for reason in result.missing_evidence]
    findings = _sync_findings(result.counted_analysis, Severity.ERROR if result.over_budget else Severity.WARNING)
    severity = Severity.ERROR if result.strict else Severity.WARNING
    findings.extend(_baseline_finding(usage, result, severity) for usage in result.baseline_problems)
    return sorted(findings, key=lambda finding: finding.sort_key)


def _sync_findings(counted: Analysis, severity: Severity) -> list[Finding]:
    """One finding per call site and rule, on the user's line: where the sync happens when that is the user's
    code, else the user's frame that led into the library (the library's line goes in the message). A sync with
    neither has nowhere in the repository to annotate and is left out here (the summary still counts it); one
    without any Python frame is placed at its trace."""
    findings = []
    shadow = bool(counted.traces) and all(info.shadow_run for info in counted.traces)
    for code in sorted({sync.rule for sync in counted.records}):
        of_rule = counted.with_records(tuple(sync for sync in counted.records if sync.rule == code))
        for site in of_rule.sites:
            where = site.call_site
            if where is not None and not where.user and site.via is None:
                continue
            at = where if where is None or where.user else site.via
            findings.append(Finding(
                code=code, message=_message(code, site, shadow=shadow),
                # Without a Python frame the only place to point at is the trace the sync was found in.
                path=at.file if at else next(r.trace for r in of_rule.records if r.site == site.site),
                line=max(at.line, 1) if at else 1, severity=severity,
                confidence=Confidence.HIGH if site.confirmed else Confidence.MEDIUM,
                scope=at.function if at else None))
    return findings


def _stall(site: SiteSummary) -> str:
    """The site's stall, where a trace event timed it: a sync the guard alone saw has an unknown stall, not 0."""
    if site.unmeasured == site.count:
        return "stall not measured (seen by the guard only)"
    unmeasured = f" ({site.unmeasured} not measured)" if site.unmeasured else ""
    return f"stall {format_us(site.stall_us)}{unmeasured}"


def _message(code: str, site: SiteSummary, *, shadow: bool = False) -> str:
    rule = get_rule(code)
    evidence = [f"{count} {name}" for count, name in ((site.confirmed, "confirmed"), (site.latent, "latent"))
                if count]
    noun = "sync" if site.count == 1 else "syncs"
    ops = ", ".join(label(op) for op in site.ops)
    threads = ", ".join(label(thread) for thread in site.threads)
    text = f"{' + '.join(evidence)} {noun} ({rule.code} {rule.name}: {ops}) on {threads}, {_stall(site)}"
    where = site.call_site
    if where is not None and not where.user:
        text += f"; it happens in the library at {label(site.where)}"
    scopes = compress_scopes({scope: count for scope, count in site.scopes.items() if scope}, limit=3)
    if scopes:
        text += f"; scopes {label('; '.join(scopes))}"
    if where is None:
        text += "; no Python frame recorded (profile with with_stack=True to find the line)"
    if site.latent and shadow:
        text += (" (latent: a run under the shadow device, whose tensors, and the branches taken on them, are a GPU "
                 "run's)")
    elif site.latent:
        text += " (latent: a CPU run; a GPU run can sync elsewhere where code branches on the device)"
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
