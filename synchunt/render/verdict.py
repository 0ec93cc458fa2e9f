"""One-line verdicts every renderer shares (terminal, HTML, gate headline)."""

from __future__ import annotations

from collections import Counter

from synchunt.attribute import Analysis, TraceInfo
from synchunt.render.text import label
from synchunt.units import format_us, plural


def verdict(analysis: Analysis) -> str:
    """``"sync-free"`` or e.g. ``"54 latent syncs on thread scheduler"``."""
    totals = analysis.totals
    return verdict_of(totals.confirmed, totals.latent, sorted({r.thread.name for r in analysis.records}))


def verdict_of(confirmed: int, latent: int, threads: list[str] | tuple[str, ...]) -> str:
    if not confirmed + latent:
        return "sync-free"
    kinds = [f"{n} {name}" for n, name in ((confirmed, "confirmed"), (latent, "latent")) if n]
    if len(threads) == 1:
        name = label(threads[0])
        where = name if name.startswith("thread ") else f"thread {name}"
    else:
        where = f"{len(threads)} threads"
    return f"{' + '.join(kinds)} {'sync' if confirmed + latent == 1 else 'syncs'} on {where}"


def stall_summary(analysis: Analysis) -> str:
    """`` · stall 592.9 µs total, 63.8 µs max · device idle 1.20 ms caused`` (empty when there is no sync)."""
    totals = analysis.totals
    if not totals.syncs:
        return ""
    text = f" · stall {format_us(totals.stall_us)} total, {format_us(totals.max_stall_us)} max"
    if totals.device_idle_us is not None:
        text += f" · device idle {format_us(totals.device_idle_us)} caused"
    return text


def trace_line(info: TraceInfo) -> str:
    """``path (rank 0 · latent · hicache-dcp masked on cpu)``: which trace, analysed how, captured of what."""
    where = f"rank {info.rank} · " if info.rank is not None else ""
    target = info.synchunt.get("target")
    about = f" · {target} {info.synchunt.get('label', '')} on {info.synchunt.get('device', '?')}" if target else ""
    return f"{info.path} ({where}{info.mode}{about})"


def set_aside_note(analysis: Analysis) -> str | None:
    """What was set aside (the profiler's own syncs, reviewed host reads), so that a reader of a count knows what
    it leaves out."""
    items = [item for info in analysis.traces for item in info.set_aside]
    if not items:
        return None
    reasons = Counter(item.reason for item in items)
    text = "; ".join(f"{reason} ({plural(count, 'call')}: {', '.join(sorted({i.runtime for i in items}))})"
                     for reason, count in reasons.items())
    return f"set aside, not counted: {text}"
