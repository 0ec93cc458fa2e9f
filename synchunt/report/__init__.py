"""The stall report's data: each side's analysis with the timelines built from its traces, and the comparison.

Building it reads the traces (timelines need their events); rendering it (``synchunt.render.html``) reads only
this model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from synchunt.attribute import Analysis
from synchunt.compare import Comparison, compare
from synchunt.report.sources import site_sources
from synchunt.report.timeline import DEFAULT_BUDGET, Timeline, build_timeline
from synchunt.trace import Trace


@dataclass(frozen=True)
class ReportSide:
    """``sources``: call site label → its source line, for the sites whose file could be read."""

    key: str  # "report", or "before"/"after"
    analysis: Analysis
    timelines: tuple[Timeline, ...]
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StallReport:
    sides: tuple[ReportSide, ...]
    comparison: Comparison | None = None
    thread: str | None = None


def build_report(analysis: Analysis, traces: Sequence[Trace] = (), *, after: Analysis | None = None,
                 after_traces: Sequence[Trace] = (), thread: str | None = None,
                 budget: int = DEFAULT_BUDGET) -> StallReport:
    """The report of ``analysis`` (and, with ``after``, its comparison). Only traces the analysis was made from
    get a timeline; an analysis read back from JSON without its traces has none."""
    if after is None:
        return StallReport((_side("report", analysis, traces, thread, budget),), thread=thread)
    return StallReport((_side("before", analysis, traces, thread, budget),
                        _side("after", after, after_traces, thread, budget)),
                       comparison=compare(analysis, after), thread=thread)


def _side(key: str, analysis: Analysis, traces: Sequence[Trace], thread: str | None, budget: int) -> ReportSide:
    wanted = {info.path for info in analysis.traces}
    timelines = tuple(build_timeline(trace, analysis, thread=thread, budget=budget)
                      for trace in traces if str(trace.path) in wanted)
    return ReportSide(key, analysis, timelines, site_sources(analysis))


__all__ = ["DEFAULT_BUDGET", "ReportSide", "StallReport", "Timeline", "build_report"]
