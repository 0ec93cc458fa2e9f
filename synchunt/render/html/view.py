"""What the report page shows of one analysis, as page data: its header, and the analysis's own call-site and
scope summaries bounded to what a browser can open.

The sites and scopes are the model's (``Analysis.sites``, ``Analysis.scopes``): this module selects and bounds
them (the busiest sites and scopes, the most frequent call paths, the ends of very deep stacks) and adds what the
report read for the page (each site's source line). Everything is JSON-ready and carries trace text unescaped;
escaping happens where it is rendered (``escape``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from synchunt.attribute import Analysis, SiteSummary
from synchunt.attribute.model import CallPath, ScopeSummary
from synchunt.render.verdict import set_aside_note, verdict
from synchunt.rules import get_rule
from synchunt.units import format_us

MAX_STACKS_PER_SITE = 12  # the most frequent call paths; the rest are counted, not listed
# A page a browser can open whatever the trace: the most important sites and scopes, and the ends of very deep
# stacks, are shown; what is left out is counted (the JSON output has everything).
MAX_SITES = 200
MAX_SCOPES = 300
STACK_INNER, STACK_OUTER = 48, 16


@dataclass(frozen=True)
class ReportModel:
    """One side of the report (one analysis): its header, the sites and scopes shown, their sources."""

    header: dict[str, Any]
    sites: tuple[SiteSummary, ...]
    scopes: tuple[ScopeSummary, ...]
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # call site label → its source line

    def as_json(self) -> dict[str, Any]:
        return {"header": self.header, "sites": [self.site_json(site) for site in self.sites],
                "scopes": [msgspec.to_builtins(scope) for scope in self.scopes], "rules": self.rules}

    def site_json(self, site: SiteSummary) -> dict[str, Any]:
        """The site as the page reads it: the model's summary, its most frequent call paths (deep ones bounded)
        and its source line."""
        data = msgspec.to_builtins(site)
        data["paths"] = [{"count": path.count, "op_chain": path.op_chain, "rule": path.rule,
                          "frames": _bounded_frames(path)} for path in site.paths[:MAX_STACKS_PER_SITE]]
        data["other_paths"] = max(0, len(site.paths) - MAX_STACKS_PER_SITE)
        source = self.sources.get(site.site)
        data["source"] = None if source is None else {"file": site.file, "line": site.line, "text": source,
                                                      "user": site.call_site.user if site.call_site else True}
        return data


def build_model(analysis: Analysis, sources: dict[str, str] | None = None) -> ReportModel:
    """The page's model of ``analysis``; ``sources`` (call site → its source line) as the report read them."""
    shown = analysis.sites[:MAX_SITES]
    busiest = sorted(analysis.scopes, key=lambda scope: -scope.count)[:MAX_SCOPES]
    scopes = tuple(scope for scope in analysis.scopes if scope in busiest)  # natural order, as the model's
    codes = sorted({code for site in shown for code in site.rules})
    header = {**_header(analysis), "sites_left_out": len(analysis.sites) - len(shown),
              "scopes_left_out": len(analysis.scopes) - len(scopes)}
    return ReportModel(header=header, sites=shown, scopes=scopes, rules={code: rule_doc(code) for code in codes},
                       sources=dict(sources or {}))


def rule_doc(code: str) -> dict[str, Any]:
    """The parts of a rule the report explains: what syncs and why, and the rule's own example (a catalogue
    example, never a rewrite of the user's line)."""
    rule = get_rule(code)
    return {"code": rule.code, "name": rule.name, "kind": rule.kind.value, "title": rule.title,
            "mechanism": rule.mechanism, "why_bad": rule.why_bad, "fix": rule.fix,
            "example": rule.example, "use_instead": rule.use_instead, "references": list(rule.references)}


def _header(analysis: Analysis) -> dict[str, Any]:
    totals = analysis.totals
    traces = []
    for info in analysis.traces:
        meta = info.synchunt or {}
        partial = None if info.partial is None else (
            f"partial trace: {info.partial.reason}; analysed the first {info.partial.events_read} events "
            f"({info.partial.bytes_read} bytes)")
        traces.append({"path": info.path, "rank": info.rank, "mode": info.mode,
                       "device_activity": info.device_activity, "target": meta.get("target"),
                       "label": meta.get("label"), "torch": meta.get("torch"),
                       # what a synchunt capture ran on, else the accelerators the trace itself names
                       "device": meta.get("device") or ", ".join(info.devices) or None,
                       "captured_at": meta.get("captured_at"), "duration_us": max(0.0, info.end_us - info.start_us),
                       "partial": partial})
    devices = sorted({t["device"] for t in traces if t["device"]})
    torches = sorted({t["torch"] for t in traces if t["torch"]})
    return {"verdict": verdict(analysis), "clean": totals.syncs == 0, "syncs": totals.syncs,
            "confirmed": totals.confirmed, "latent": totals.latent, "stall_us": totals.stall_us,
            "max_stall_us": totals.max_stall_us, "stall": format_us(totals.stall_us),
            "max_stall": format_us(totals.max_stall_us), "traces": traces, "device": ", ".join(devices),
            "torch": ", ".join(torches), "filters": {k: str(v) for k, v in analysis.filters.items()},
            "threads": sorted({r.thread.name for r in analysis.records}), "set_aside": set_aside_note(analysis),
            "device_idle_us": totals.device_idle_us,
            "device_idle": None if totals.device_idle_us is None else format_us(totals.device_idle_us),
            "collective_delay_us": totals.collective_delay_us,
            "warmup": totals.warmup, "warmup_stall": totals.warmup_stall(),
            "notes": list(analysis.notes), "shared": [msgspec.to_builtins(d) for d in analysis.shared_details]}


def _bounded_frames(path: CallPath) -> list[dict[str, Any]]:
    """The frames of one call path, innermost first, each saying whether it is the user's code; a very deep one
    keeps both ends and says what it left out."""
    users = path.user or (False,) * len(path.frames)
    listed = [{**msgspec.to_builtins(frame), "user": user} for frame, user in zip(path.frames, users, strict=True)]
    if len(listed) <= STACK_INNER + STACK_OUTER:
        return listed
    gap = {"file": "…", "line": 0, "function": f"{len(listed) - STACK_INNER - STACK_OUTER} frames left out",
           "user": False}
    return [*listed[:STACK_INNER], gap, *listed[-STACK_OUTER:]]
