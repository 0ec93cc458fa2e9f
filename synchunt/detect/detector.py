"""Find syncs in a trace: confirmed from runtime evidence, latent from catalogue ops on CPU-only traces."""

from __future__ import annotations

from synchunt.detect.columns import Columns
from synchunt.detect.confirmed import confirmed_syncs
from synchunt.detect.latent import latent_syncs
from synchunt.detect.merge import Candidate
from synchunt.detect.model import DetectedSync, Detection, Mode, SetAside
from synchunt.detect.profiler_sync import split_profiler_syncs
from synchunt.detect.reviewed_calls import split_reviewed_calls
from synchunt.rules import PROFILER_OWN_SYNC
from synchunt.trace import Trace


def effective_mode(trace: Trace, mode: Mode | str) -> Mode:
    mode = Mode(mode)
    if mode is Mode.AUTO:
        return Mode.CONFIRMED if trace.device_activity else Mode.LATENT
    return mode


def detect(trace: Trace, mode: Mode | str = Mode.AUTO) -> Detection:
    """Every sync in ``trace``. ``auto`` confirms on traces with device activity, else reports latent syncs."""
    chosen = effective_mode(trace, mode)
    columns = Columns.of(trace)
    found = confirmed_syncs(trace, columns) if chosen is Mode.CONFIRMED else latent_syncs(trace, columns)
    kept, own = split_profiler_syncs(found, columns)
    kept, host_reads = split_reviewed_calls(kept, columns)
    records = tuple(_record(candidate, pid, tid) for candidate, (pid, tid)
                    in zip(kept, columns.ids([candidate.event for candidate in kept]), strict=True))
    reasons = [(c, PROFILER_OWN_SYNC.reason) for c in own] + [(c, call.reason) for c, call in host_reads]
    set_aside = tuple(SetAside(event=c.event, runtime=" + ".join(c.runtime) or c.op, ts_us=c.ts_us,
                               stall_us=c.stall_us, pid=pid, tid=tid, reason=reason)
                      for (c, reason), (pid, tid) in zip(reasons, columns.ids([c.event for c, _ in reasons]),
                                                         strict=True))
    return Detection(mode=chosen, records=records, set_aside=set_aside)


def _record(candidate: Candidate, pid: int | str, tid: int | str) -> DetectedSync:
    return DetectedSync(
        event=candidate.event, rule=candidate.rule, confirmed=candidate.confirmed, op=candidate.op,
        runtime=" + ".join(candidate.runtime), runtime_events=tuple(candidate.runtime_events),
        ts_us=candidate.ts_us, stall_us=candidate.stall_us, stall_source=candidate.stall_source,
        direction=candidate.direction, pid=pid, tid=tid)
