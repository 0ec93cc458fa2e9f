"""The comparison's one-line summary, shared by its text, JSON and HTML forms."""

from __future__ import annotations

from synchunt.compare import Comparison, Side
from synchunt.render.verdict import verdict_of
from synchunt.units import format_us


def side_verdict(side: Side) -> str:
    return verdict_of(side.confirmed, side.latent, side.threads)


def headline(comparison: Comparison) -> str:
    """``54 → 0 syncs · stall 1.41 ms → 0.0 µs (1.41 ms saved) · aten::nonzero gone``, or ``no change: …``
    when no site changed and the stall moved within the noise threshold."""
    before, after = comparison.before, comparison.after
    noise = comparison.noise
    if not comparison.changed:
        why = (f"within the noise threshold of {format_us(noise.threshold(before.stall_us))}"
               if noise.stall_judged else "latent: the counts decide, the stall is CPU time here")
        return (f"no change: {before.syncs} → {after.syncs} syncs, stall {format_us(before.stall_us)} → "
                f"{format_us(after.stall_us)} ({why})")
    saved = comparison.stall_saved_us
    parts = [f"{before.syncs} → {after.syncs} syncs",
             f"stall {format_us(before.stall_us)} → {format_us(after.stall_us)} "
             f"({format_us(abs(saved))} {'saved' if saved >= 0 else 'added'})"]
    if not noise.stall_judged:
        parts[-1] += ", CPU time: not judged"
    elif comparison.stall_within_noise:
        parts[-1] += ", within noise"
    if before.device_idle_us is not None or after.device_idle_us is not None:
        parts.append(f"device idle {_idle(before.device_idle_us)} → {_idle(after.device_idle_us)}")
    if comparison.ops_gone:
        parts.append(f"{', '.join(comparison.ops_gone)} gone")
    if comparison.ops_new:
        parts.append(f"new: {', '.join(comparison.ops_new)}")
    if comparison.new_sites:
        parts.append(f"{len(comparison.new_sites)} new call site{'s' if len(comparison.new_sites) != 1 else ''}")
    return " · ".join(parts)


def _idle(value: float | None) -> str:
    return format_us(value) if value is not None else "unknown"
