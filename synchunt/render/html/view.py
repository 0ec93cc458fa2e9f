"""What the report page shows, as plain data: header, call sites, scopes and call paths of one analysis.

Everything here is JSON-ready (str, int, float, list, dict) and carries trace text unescaped; escaping happens
where it is rendered (``escape``). Figures are built from this model, and tests check it against the analysis.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from synchunt.attribute import Analysis, SiteSummary, Sync
from synchunt.render.units import compress_scopes, format_us
from synchunt.render.verdict import set_aside_note, verdict
from synchunt.rules import get_rule
from synchunt.sites import natural_key, scope_label

MAX_STACKS_PER_SITE = 12  # the most frequent call paths; the rest are counted, not listed
# A page a browser can open whatever the trace: the most important sites and scopes, and the ends of very deep
# stacks, are shown; what is left out is counted (the JSON output has everything).
MAX_SITES = 200
MAX_SCOPES = 300
MAX_SCOPES_PER_SITE = 50
STACK_INNER, STACK_OUTER = 48, 16


@dataclass(frozen=True)
class SiteView:
    site: str
    file: str | None
    line: int | None
    function: str | None
    count: int
    confirmed: int
    latent: int
    stall_us: float
    max_stall_us: float
    rules: list[str]
    ops: list[str]
    op_chains: list[tuple[str, int]]
    scopes: dict[str, int]
    scope_summary: list[str]
    threads: list[str]
    stacks: list[dict[str, Any]]  # frames (innermost first), count, and that path's own op chain and rule
    other_stacks: int = 0
    device_idle_us: float | None = None
    max_idle_us: float | None = None
    collective_delay_us: float | None = None
    source: dict[str, Any] | None = None  # file, line, text: the site's own line, when it could be read


@dataclass(frozen=True)
class ScopeView:
    scope: str
    count: int
    stall_us: float
    by_site: dict[str, int]
    named: bool = True  # False for the syncs outside any record_function scope


@dataclass(frozen=True)
class ReportModel:
    """One side of the report (one analysis)."""

    header: dict[str, Any]
    sites: list[SiteView]
    scopes: list[ScopeView]
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"header": self.header, "sites": [vars(s) for s in self.sites],
                "scopes": [vars(s) for s in self.scopes], "rules": self.rules}


def build_model(analysis: Analysis, sources: dict[str, str] | None = None) -> ReportModel:
    """The page's model of ``analysis``; ``sources`` (call site → its source line) as the report read them."""
    members: dict[str, list[Sync]] = {}
    for record in analysis.records:
        members.setdefault(record.site, []).append(record)
    shown = analysis.sites[:MAX_SITES]
    sites = [_site_view(site, members[site.site], (sources or {}).get(site.site)) for site in shown]
    codes = sorted({code for site in sites for code in site.rules})
    scopes, scopes_left_out = _scope_views(analysis.records)
    header = {**_header(analysis), "sites_left_out": len(analysis.sites) - len(shown),
              "scopes_left_out": scopes_left_out}
    return ReportModel(header=header, sites=sites, scopes=scopes, rules={code: rule_doc(code) for code in codes})


def rule_doc(code: str) -> dict[str, Any]:
    """The parts of a rule the report explains: what syncs and why, and what to write instead."""
    rule = get_rule(code)
    return {"code": rule.code, "name": rule.name, "kind": rule.kind.value, "title": rule.title,
            "mechanism": rule.mechanism, "why_bad": rule.why_bad, "fix": rule.fix,
            "example": rule.example, "use_instead": rule.use_instead, "references": list(rule.references)}


def _header(analysis: Analysis) -> dict[str, Any]:
    summary = analysis.summary
    traces = []
    for info in analysis.traces:
        meta = info.synchunt or {}
        partial = None if info.partial is None else (
            f"partial trace: {info.partial.reason}; analysed the first {info.partial.events_read} events "
            f"({info.partial.bytes_read} bytes)")
        traces.append({"path": info.path, "rank": info.rank, "mode": info.mode,
                       "device_activity": info.device_activity, "target": meta.get("target"),
                       "label": meta.get("label"), "device": meta.get("device"), "torch": meta.get("torch"),
                       "captured_at": meta.get("captured_at"), "duration_us": max(0.0, info.end_us - info.start_us),
                       "partial": partial})
    devices = sorted({t["device"] for t in traces if t["device"]})
    torches = sorted({t["torch"] for t in traces if t["torch"]})
    return {"verdict": verdict(analysis), "clean": summary["syncs"] == 0, "syncs": summary["syncs"],
            "confirmed": summary["confirmed"], "latent": summary["latent"], "stall_us": summary["stall_us"],
            "max_stall_us": summary["max_stall_us"], "stall": format_us(summary["stall_us"]),
            "max_stall": format_us(summary["max_stall_us"]), "traces": traces, "device": ", ".join(devices),
            "torch": ", ".join(torches), "filters": {k: str(v) for k, v in analysis.filters.items()},
            "threads": sorted({r.thread.name for r in analysis.records}), "set_aside": set_aside_note(analysis),
            "device_idle_us": summary["device_idle_us"],
            "device_idle": None if summary["device_idle_us"] is None else format_us(summary["device_idle_us"]),
            "collective_delay_us": _known_sum([s.collective_delay_us for s in analysis.sites])}


def _known_sum(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(sum(known)) if known else None


def _site_view(site: SiteSummary, group: list[Sync], source: str | None) -> SiteView:
    chains = Counter(_chain(r) for r in group)
    paths: Counter[tuple[tuple[tuple[str, int, str], ...], str, str]] = Counter(
        (tuple((f.file, f.line, f.function) for f in r.stack), _chain(r), r.rule) for r in group)
    return SiteView(
        site=site.site, file=site.file, line=site.line, function=site.function, count=site.count,
        confirmed=site.confirmed, latent=site.latent, stall_us=site.stall_us, max_stall_us=site.max_stall_us,
        rules=list(site.rules), ops=list(site.ops), op_chains=chains.most_common(),
        scopes={scope_label(k): v for k, v in Counter(site.scopes).most_common(MAX_SCOPES_PER_SITE)},
        scope_summary=compress_scopes(dict(site.scopes)),
        threads=list(site.threads),
        stacks=[{"frames": _bounded_frames(stack), "count": count, "op_chain": chain, "rule": rule}
                for (stack, chain, rule), count in paths.most_common(MAX_STACKS_PER_SITE)],
        other_stacks=max(0, len(paths) - MAX_STACKS_PER_SITE), device_idle_us=site.device_idle_us,
        max_idle_us=site.max_idle_us, collective_delay_us=site.collective_delay_us,
        source=None if source is None else {"file": site.file, "line": site.line, "text": source})


def _bounded_frames(stack: tuple[tuple[str, int, str], ...]) -> list[dict[str, Any]]:
    """The frames of one call path, innermost first; a very deep one keeps both ends and says what it left out."""
    frames = [{"file": f, "line": n, "function": fn} for f, n, fn in stack]
    if len(frames) <= STACK_INNER + STACK_OUTER:
        return frames
    gap = {"file": "…", "line": 0, "function": f"{len(frames) - STACK_INNER - STACK_OUTER} frames left out"}
    return [*frames[:STACK_INNER], gap, *frames[-STACK_OUTER:]]


def _chain(record: Sync) -> str:
    return " › ".join(record.op_chain) or record.runtime


def _scope_views(records: tuple[Sync, ...]) -> tuple[list[ScopeView], int]:
    """The scopes with the most syncs (at most ``MAX_SCOPES``, in natural order), and how many were left out."""
    groups: dict[str, list[Sync]] = {}
    for record in records:
        groups.setdefault(scope_label(record.scope), []).append(record)
    busiest = sorted(groups.items(), key=lambda item: -len(item[1]))[:MAX_SCOPES]
    views = [ScopeView(scope=scope, count=len(group), stall_us=float(sum(r.stall_us for r in group)),
                       by_site=dict(Counter(r.site for r in group)), named=bool(group[0].scope))
             for scope, group in busiest]
    return sorted(views, key=lambda view: natural_key(view.scope)), len(groups) - len(busiest)
