"""Before/after comparison of two analyses: per call site, per op and per scope, with the deltas a reviewer wants
(``54 → 0 syncs · aten::nonzero gone · 1.41 ms stall saved``)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from synchunt.attribute import Analysis
from synchunt.attribute.verdict import format_us, verdict

SCHEMA = "synchunt.comparison/1"


@dataclass(frozen=True)
class Side:
    verdict: str
    syncs: int
    confirmed: int
    latent: int
    stall_us: float
    max_stall_us: float
    traces: list[str]
    labels: list[str]


@dataclass(frozen=True)
class SiteDelta:
    """One call site on both sides. ``after_site`` differs from ``site`` when the site moved to another line of
    the same function (an edit above it), or is the only label when the site is new."""

    site: str
    after_site: str | None
    before: int
    after: int
    before_stall_us: float
    after_stall_us: float
    rules: list[str]
    ops_before: list[str]
    ops_after: list[str]

    @property
    def delta(self) -> int:
        return self.after - self.before

    @property
    def stall_saved_us(self) -> float:
        return self.before_stall_us - self.after_stall_us

    @property
    def status(self) -> str:
        if self.before and not self.after:
            return "gone"
        if self.after and not self.before:
            return "new"
        return "fewer" if self.delta < 0 else "more" if self.delta > 0 else "same"


@dataclass(frozen=True)
class CountDelta:
    key: str
    before: int
    after: int


@dataclass(frozen=True)
class Comparison:
    before: Side
    after: Side
    sites: list[SiteDelta]
    ops: list[CountDelta]
    scopes: list[CountDelta]

    @property
    def stall_saved_us(self) -> float:
        return self.before.stall_us - self.after.stall_us

    @property
    def ops_gone(self) -> list[str]:
        return [o.key for o in self.ops if o.before and not o.after]

    @property
    def ops_new(self) -> list[str]:
        return [o.key for o in self.ops if o.after and not o.before]

    def headline(self) -> str:
        """``54 → 0 syncs · stall 1.41 ms → 0.0 µs (1.41 ms saved) · aten::nonzero gone``."""
        parts = [f"{self.before.syncs} → {self.after.syncs} syncs",
                 f"stall {format_us(self.before.stall_us)} → {format_us(self.after.stall_us)} "
                 f"({format_us(abs(self.stall_saved_us))} {'saved' if self.stall_saved_us >= 0 else 'added'})"]
        if self.ops_gone:
            parts.append(f"{', '.join(self.ops_gone)} gone")
        if self.ops_new:
            parts.append(f"new: {', '.join(self.ops_new)}")
        return " · ".join(parts)

    def to_json(self) -> dict[str, Any]:
        sites = [{**asdict(s), "delta": s.delta, "stall_saved_us": s.stall_saved_us, "status": s.status}
                 for s in self.sites]
        return {"schema": SCHEMA, "headline": self.headline(), "before": asdict(self.before),
                "after": asdict(self.after), "stall_saved_us": self.stall_saved_us, "ops_gone": self.ops_gone,
                "ops_new": self.ops_new, "sites": sites, "ops": [asdict(o) for o in self.ops],
                "scopes": [asdict(s) for s in self.scopes]}


def compare(before: Analysis, after: Analysis) -> Comparison:
    return Comparison(before=_side(before), after=_side(after), sites=_site_deltas(before, after),
                      ops=_count_deltas(before.syncs["op"], after.syncs["op"]),
                      scopes=_count_deltas(_scopes(before.syncs), _scopes(after.syncs)))


def render_compare_json(comparison: Comparison) -> str:
    return json.dumps(comparison.to_json(), indent=2, ensure_ascii=False)


def render_compare_text(comparison: Comparison) -> RenderableType:
    """A rich renderable; trace text is never read as markup."""
    before, after = comparison.before, comparison.after
    improved = after.syncs < before.syncs or (after.syncs == before.syncs and comparison.stall_saved_us > 0)
    style = "bold green" if after.syncs == 0 or improved else "bold red" if after.syncs > before.syncs else "bold"
    parts: list[RenderableType] = [
        Text(f"before: {', '.join(before.labels)} — {before.verdict}", style="dim"),
        Text(f"after:  {', '.join(after.labels)} — {after.verdict}", style="dim"),
        Text(comparison.headline(), style=style),
    ]
    if not comparison.sites:
        return Group(*parts)
    table = Table(title="syncs by call site", title_justify="left", expand=True)
    table.add_column("call site", ratio=1, overflow="fold")
    table.add_column("rule", no_wrap=True)
    table.add_column("before", justify="right", no_wrap=True)
    table.add_column("after", justify="right", no_wrap=True)
    table.add_column("Δ", justify="right", no_wrap=True)
    table.add_column("Δ stall", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for site in comparison.sites:
        label = Text(site.site)
        if site.after_site and site.after_site != site.site:
            label.append(f"\n→ {site.after_site}", style="dim")
        colour = {"gone": "green", "fewer": "green", "new": "red", "more": "red"}.get(site.status, "")
        table.add_row(label, Text(", ".join(site.rules)), Text(str(site.before)), Text(str(site.after)),
                      Text(f"{site.delta:+d}", style=colour), Text(signed_us(-site.stall_saved_us), style=colour),
                      Text(site.status, style=colour))
    parts.append(table)
    if comparison.ops:
        ops = Table(title="syncs by op", title_justify="left")
        ops.add_column("op")
        ops.add_column("before", justify="right")
        ops.add_column("after", justify="right")
        for op in comparison.ops:
            ops.add_row(Text(op.key), Text(str(op.before)), Text(str(op.after)))
        parts.append(ops)
    return Group(*parts)


def signed_us(value: float) -> str:
    """``+1.41 ms`` / ``−897.7 µs``: a stall delta."""
    return f"{'−' if value < 0 else '+'}{format_us(abs(value))}"


def _side(analysis: Analysis) -> Side:
    summary = analysis.summary
    labels = []
    for info in analysis.traces:
        meta = info.synchunt or {}
        name = " ".join(str(v) for v in (meta.get("target"), meta.get("label")) if v) or info.path
        labels.append(f"{name} (rank {info.rank})" if info.rank is not None else name)
    return Side(verdict=verdict(analysis), syncs=summary["syncs"], confirmed=summary["confirmed"],
                latent=summary["latent"], stall_us=summary["stall_us"], max_stall_us=summary["max_stall_us"],
                traces=[info.path for info in analysis.traces], labels=labels)


def _site_deltas(before: Analysis, after: Analysis) -> list[SiteDelta]:
    old = {row.site: row for row in before.call_sites.itertuples(index=False)}
    new = {row.site: row for row in after.call_sites.itertuples(index=False)}
    pairs: list[tuple[Any, Any]] = [(old[s], new.pop(s)) for s in list(old) if s in new]
    unmatched = [row for s, row in old.items() if s not in {p[0].site for p in pairs}]
    for row in unmatched:
        # The same function, one line elsewhere: an edit moved the site, it is still the same site.
        moved = [r for r in new.values() if r.file == row.file and r.function == row.function and row.file]
        if len(moved) == 1:
            pairs.append((row, new.pop(moved[0].site)))
        else:
            pairs.append((row, None))
    pairs.extend((None, row) for row in new.values())
    deltas = [_site_delta(b, a) for b, a in pairs]
    return sorted(deltas, key=lambda d: (-max(d.before_stall_us, d.after_stall_us), -max(d.before, d.after)))


def _site_delta(before: Any, after: Any) -> SiteDelta:
    main = before if before is not None else after
    rules = sorted(set(before.rules if before is not None else []) | set(after.rules if after is not None else []))
    return SiteDelta(site=main.site, after_site=None if after is None else after.site,
                     before=0 if before is None else int(before.count), after=0 if after is None else int(after.count),
                     before_stall_us=0.0 if before is None else float(before.stall_us),
                     after_stall_us=0.0 if after is None else float(after.stall_us), rules=rules,
                     ops_before=[] if before is None else list(before.ops),
                     ops_after=[] if after is None else list(after.ops))


def _scopes(syncs: pd.DataFrame) -> pd.Series:
    return syncs["scope"].fillna("").astype(str).replace("", "(no scope)")


def _count_deltas(before: pd.Series, after: pd.Series) -> list[CountDelta]:
    from synchunt.report.html.model import natural_key

    old, new = Counter(before.astype(str)), Counter(after.astype(str))
    return [CountDelta(key, old.get(key, 0), new.get(key, 0)) for key in sorted(set(old) | set(new), key=natural_key)]


__all__ = ["SCHEMA", "Comparison", "CountDelta", "Side", "SiteDelta", "compare", "render_compare_json",
           "render_compare_text", "signed_us"]
