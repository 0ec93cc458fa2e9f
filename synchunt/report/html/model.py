"""What the report shows, as plain data: header, call sites, scopes and call paths of one analysis.

Everything here is JSON-ready (str, int, float, list, dict) and carries trace text unescaped; escaping happens
where it is rendered (``escape``). Figures are built from this model, and tests check it against the analysis.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from synchunt.attribute import Analysis, site_labels
from synchunt.attribute.verdict import compress_scopes, format_us, verdict
from synchunt.rules import get_rule

NO_SCOPE = "(no scope)"
MAX_STACKS_PER_SITE = 12  # the most frequent call paths; the rest are counted, not listed


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
    stacks: list[tuple[list[dict[str, Any]], int]]
    other_stacks: int = 0


@dataclass(frozen=True)
class ScopeView:
    scope: str
    count: int
    stall_us: float
    by_site: dict[str, int]


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


def build_model(analysis: Analysis) -> ReportModel:
    syncs = analysis.syncs
    labels = site_labels(syncs) if len(syncs) else pd.Series([], dtype=object)
    sites = [_site_view(row, syncs[labels == row.site]) for row in analysis.call_sites.itertuples(index=False)]
    codes = sorted({code for site in sites for code in site.rules})
    return ReportModel(header=_header(analysis), sites=sites, scopes=_scope_views(syncs, labels),
                       rules={code: rule_doc(code) for code in codes})


def rule_doc(code: str) -> dict[str, Any]:
    """The parts of a rule the report explains: what syncs and why, and what to write instead."""
    rule = get_rule(code)
    return {"code": rule.code, "name": rule.name, "kind": rule.kind.value, "title": rule.title,
            "mechanism": rule.mechanism, "why_bad": rule.why_bad, "alternative": rule.fix,
            "example": rule.example, "use_instead": rule.use_instead, "references": list(rule.references)}


def natural_key(text: str) -> list[Any]:
    """``layer_2`` before ``layer_10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _header(analysis: Analysis) -> dict[str, Any]:
    summary = analysis.summary
    traces = []
    for info in analysis.traces:
        meta = info.synchunt or {}
        traces.append({"path": info.path, "rank": info.rank, "mode": info.mode,
                       "device_activity": info.device_activity, "target": meta.get("target"),
                       "label": meta.get("label"), "device": meta.get("device"), "torch": meta.get("torch"),
                       "captured_at": meta.get("captured_at"), "duration_us": max(0.0, info.end_us - info.start_us)})
    devices = sorted({t["device"] for t in traces if t["device"]})
    torches = sorted({t["torch"] for t in traces if t["torch"]})
    return {"verdict": verdict(analysis), "clean": summary["syncs"] == 0, "syncs": summary["syncs"],
            "confirmed": summary["confirmed"], "latent": summary["latent"], "stall_us": summary["stall_us"],
            "max_stall_us": summary["max_stall_us"], "stall": format_us(summary["stall_us"]),
            "max_stall": format_us(summary["max_stall_us"]), "traces": traces, "device": ", ".join(devices),
            "torch": ", ".join(torches), "filters": {k: str(v) for k, v in analysis.filters.items()},
            "threads": sorted({str(t) for t in analysis.syncs["thread"]}) if len(analysis.syncs) else []}


def _site_view(row: Any, group: pd.DataFrame) -> SiteView:
    chains = Counter(" › ".join(chain) or runtime for chain, runtime in zip(group["op_chain"], group["runtime"],
                                                                            strict=True))
    stacks: Counter[tuple[tuple[str, int, str], ...]] = Counter(
        tuple((str(f.get("file")), int(f.get("line") or 0), str(f.get("function"))) for f in stack)
        for stack in group["stack"])
    return SiteView(
        site=row.site, file=row.file, line=None if row.line is None else int(row.line), function=row.function,
        count=int(row.count), confirmed=int(row.confirmed), latent=int(row.latent), stall_us=float(row.stall_us),
        max_stall_us=float(row.max_stall_us), rules=list(row.rules), ops=list(row.ops),
        op_chains=chains.most_common(), scopes={(k or NO_SCOPE): int(v) for k, v in row.scopes.items()},
        scope_summary=compress_scopes(dict(row.scopes)), threads=list(row.threads),
        stacks=[([{"file": f, "line": n, "function": fn} for f, n, fn in stack], count)
                for stack, count in stacks.most_common(MAX_STACKS_PER_SITE)],
        other_stacks=max(0, len(stacks) - MAX_STACKS_PER_SITE))


def _scope_views(syncs: pd.DataFrame, labels: pd.Series) -> list[ScopeView]:
    if syncs.empty:
        return []
    scopes = syncs["scope"].fillna("").replace("", NO_SCOPE)
    views = []
    for scope, group in syncs.groupby(scopes, sort=False):
        by_site = labels[group.index].value_counts(sort=False)
        views.append(ScopeView(scope=str(scope), count=len(group), stall_us=float(group["stall_us"].sum()),
                               by_site={str(k): int(v) for k, v in by_site.items()}))
    return sorted(views, key=lambda view: natural_key(view.scope))
