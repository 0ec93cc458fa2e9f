"""The corpus run's report: per-family counts of each outcome, and the first failing case of each kind."""

from __future__ import annotations

from collections import Counter, defaultdict

from hostile_case import KINDS, PASS
from hostile_runner import Result

HARNESS_ERROR = "harness error"


def counts(results: list[Result]) -> dict[str, Counter[str]]:
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for result in results:
        table[result.family][result.kind] += 1
    return table


def summarize(results: list[Result], *, seed: int, elapsed_s: float | None = None) -> str:
    """A Markdown table (family × outcome) and one reproducer per failure kind."""
    table = counts(results)
    kinds = list(KINDS) + ([HARNESS_ERROR] if any(r.kind == HARNESS_ERROR for r in results) else [])
    header = ["family", "cases", *kinds]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    total: Counter[str] = Counter()
    for family, row in table.items():
        total.update(row)
        lines.append("| " + " | ".join([family, str(sum(row.values())), *(str(row[k]) for k in kinds)]) + " |")
    lines.append("| " + " | ".join(["**all**", f"**{sum(total.values())}**", *(f"**{total[k]}**" for k in kinds)])
                 + " |")
    failed = sum(total.values()) - total[PASS]
    took = f" in {elapsed_s:.0f} s" if elapsed_s is not None else ""
    lines += ["", f"{len(results)} cases{took}, {total[PASS]} passed, {failed} failed (seed {seed})."]
    first: dict[str, Result] = {}
    for result in results:
        if result.kind != PASS:
            first.setdefault(result.kind, result)
    if first:
        lines += ["", "First failing case of each kind:", ""]
    for kind, result in first.items():
        lines.append(f"- **{kind}** `{result.id}` (exit {result.exit_code}, {result.wall_s:.1f} s, "
                     f"{result.cpu_s:.1f} s CPU, {result.peak_rss_mb:.0f} MB): {result.detail}")
        lines.append(f"  reproduce: `python scripts/hostile_corpus.py --seed {seed} --case '{result.id}' --keep`")
    return "\n".join(lines)


def failure_digest(results: list[Result], *, limit: int = 3) -> str:
    """Per family and kind, how many failed and a few example ids with their reasons."""
    groups: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for result in results:
        if result.kind != PASS:
            groups[(result.family, result.kind)].append(result)
    lines = []
    for (family, kind), members in sorted(groups.items()):
        lines.append(f"{family} / {kind}: {len(members)}")
        for result in members[:limit]:
            lines.append(f"    {result.id}: {result.detail}")
    return "\n".join(lines)
