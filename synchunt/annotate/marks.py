"""From an analysed trace to the marks of its annotated copy: one per attributed sync, with what it waited on."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from synchunt.annotate.model import SyncMark, WaitTarget
from synchunt.annotate.write import write_annotated
from synchunt.attribute import Sync
from synchunt.rules import RULES_BY_CODE
from synchunt.trace import Trace, load_trace


def annotate_trace(source: str | Path, out: str | Path, *, force: bool = False,
                   mode: str = "auto") -> tuple[Path, int]:
    """Analyse ``source`` and write it with the synchunt track to ``out``: (the path written, marks)."""
    from synchunt.attribute import analyze

    trace = load_trace(source)
    analysis = analyze(trace, mode=mode)
    marks = build_marks(trace, [r for r in analysis.records if r.trace == str(trace.path)])
    return write_annotated(trace.path, Path(out), marks, force=force), len(marks)


def build_marks(trace: Trace, records: Sequence[Sync]) -> list[SyncMark]:
    """One mark per attributed sync of ``trace`` that has a trace time (a sync only the runtime guard saw has no
    place in the trace); arrows to the device work it waited on (its measured impact)."""
    pid, tid = trace.events["pid"].to_numpy(), trace.events["tid"].to_numpy()
    marks = []
    for record in records:
        if record.ts_us is None:
            continue
        rule = RULES_BY_CODE.get(record.rule)
        impact = record.impact
        returned = impact.returned_us if impact is not None else None
        marks.append(SyncMark(
            ts_us=record.ts_us, dur_us=(returned - record.ts_us) if returned is not None else record.stall_us,
            pid=record.thread.pid if record.thread.pid is not None else 0,
            tid=record.thread.tid if record.thread.tid is not None else 0, rule=record.rule,
            title=rule.title if rule else record.rule, fix=rule.fix if rule else "", stall_us=record.stall_us,
            call_site=record.call_site.frame.label if record.call_site else None, op=record.op,
            idle_us=record.device_idle_us,
            waited_on=tuple(WaitTarget(pid=_plain(pid[a.event]), tid=_plain(tid[a.event]), ts_us=a.start_us,
                                       dur_us=a.dur_us, name=a.name) for a in (impact.waited_on if impact else ()))))
    return marks


def _plain(value: object) -> int | str:
    return value.item() if hasattr(value, "item") else value  # type: ignore[return-value]
