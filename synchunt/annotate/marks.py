"""From an analysed trace to the marks of its annotated copy: one per attributed sync, with what it waited on.

The analysis table is read by column name, defensively (a column it lacks leaves that part of the mark
empty), and each row is matched to its detection record by thread and start time to pick up the measured
impact.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from synchunt.annotate.model import SyncMark, WaitTarget
from synchunt.annotate.write import write_annotated
from synchunt.detect import Detection, detect
from synchunt.impact import SyncImpact, measure
from synchunt.rules import RULES_BY_CODE
from synchunt.trace import Trace, load_trace


def annotate_trace(source: str | Path, out: str | Path, *, force: bool = False,
                   mode: str = "auto") -> tuple[Path, int]:
    """Analyse ``source`` and write it with the synchunt track to ``out``: (the path written, marks)."""
    from synchunt.attribute import analyze

    trace = load_trace(source)
    analysis = analyze(trace, mode=mode)
    detection = detect(trace, mode)
    marks = build_marks(trace, analysis.syncs, detection, measure(trace, detection))
    return write_annotated(trace.path, Path(out), marks, force=force), len(marks)


def build_marks(trace: Trace, syncs: pd.DataFrame, detection: Detection,
                impacts: Sequence[SyncImpact]) -> list[SyncMark]:
    """One mark per row of ``syncs`` (the analysis' attributed syncs of ``trace``)."""
    by_key = {_key(r.pid, r.tid, r.ts_us): i for i, r in enumerate(detection.records)}
    events = trace.events
    rows = syncs
    if "trace" in syncs.columns and len(syncs):
        rows = syncs[syncs["trace"].astype(str) == str(trace.path)]
    marks = []
    for row in rows.to_dict("records"):
        number = by_key.get(_key(row.get("pid"), row.get("tid"), row.get("ts_us")))
        record = detection.records[number] if number is not None else None
        impact = impacts[number] if number is not None else None
        rule = str(row.get("rule") or (record.rule if record else ""))
        catalogue = RULES_BY_CODE.get(rule)
        start = float(row.get("ts_us") if row.get("ts_us") is not None else record.ts_us if record else 0.0)
        stall = float(row.get("stall_us") if row.get("stall_us") is not None else 0.0)
        waited = impact.waited_on if impact is not None else ()
        marks.append(SyncMark(
            ts_us=start,
            dur_us=(impact.returned_us - start) if impact is not None and impact.returned_us is not None else stall,
            pid=_plain(row.get("pid")), tid=_plain(row.get("tid")), rule=rule,
            title=catalogue.title if catalogue else rule, fix=catalogue.fix if catalogue else "",
            stall_us=stall, call_site=_site(row), op=str(row["op"]) if row.get("op") else None,
            idle_us=impact.device_idle_us if impact is not None else None,
            waited_on=tuple(WaitTarget(pid=_plain(events["pid"].iat[a.event]), tid=_plain(events["tid"].iat[a.event]),
                                       ts_us=a.start_us, dur_us=a.dur_us, name=a.name) for a in waited)))
    return marks


def _site(row: dict[str, Any]) -> str | None:
    file = row.get("file")
    if not isinstance(file, str) or not file:
        return None
    line = row.get("line")
    function = row.get("function")
    text = f"{file}:{_plain(line)}" if line is not None and not pd.isna(line) else file
    return f"{text} {function}" if isinstance(function, str) and function else text


def _key(pid: Any, tid: Any, ts: Any) -> tuple[str, str, float]:
    return str(_plain(pid)), str(_plain(tid)), round(float(ts), 3) if ts is not None else float("nan")


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
