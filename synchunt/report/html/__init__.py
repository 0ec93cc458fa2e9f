"""The self-contained HTML stall report (and before/after comparison), viewable offline in any browser."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from synchunt.attribute import Analysis, analyze
from synchunt.errors import UsageError
from synchunt.files import write_text_file
from synchunt.report.compare import compare as compare_analyses
from synchunt.report.html.page import render_page
from synchunt.report.html.timeline import DEFAULT_BUDGET
from synchunt.trace import Trace, load_traces

TraceSource = Trace | str | Path


def render_html_report(result: Analysis, *, traces: Sequence[TraceSource] | None = None,
                       compare: Analysis | str | Path | Sequence[str | Path] | None = None,
                       compare_traces: Sequence[TraceSource] | None = None, thread: str | None = None,
                       scope: str | None = None, budget: int = DEFAULT_BUDGET) -> str:
    """The report as an HTML string.

    ``traces`` feed the timeline (default: the analysis's own trace files, when they still exist). ``compare``
    is the "after" side: an analysis or trace path(s), analyzed with ``result``'s mode. ``thread``/``scope``
    filter both sides.
    """
    before = _filtered(result, thread, scope)
    loaded = _load(traces, result)
    if compare is None:
        return render_page(before, loaded, thread=thread, budget=budget)
    if isinstance(compare, Analysis):
        after = compare
    else:
        paths = [compare] if isinstance(compare, str | Path) else list(compare)
        compare_traces = compare_traces or load_traces(paths)
        after = analyze(compare_traces, mode=str(result.filters.get("mode", "auto")))
    after = _filtered(after, thread, scope)
    return render_page(before, loaded, comparison=compare_analyses(before, after), after=after,
                       after_traces=_load(compare_traces, after), thread=thread, budget=budget)


def write_html_report(result: Analysis, html_path: Path, *, traces: Sequence[TraceSource] | None = None,
                      compare: Analysis | str | Path | Sequence[str | Path] | None = None,
                      compare_traces: Sequence[TraceSource] | None = None, thread: str | None = None,
                      scope: str | None = None, budget: int = DEFAULT_BUDGET) -> Path:
    """Write :func:`render_html_report` to ``html_path`` (replacing it if it exists) and return the path."""
    html_path = Path(html_path)
    if html_path.is_dir():  # before the (slow) rendering
        raise UsageError(f"{html_path} is a folder; give a file name")
    page = render_html_report(result, traces=traces, compare=compare, compare_traces=compare_traces,
                              thread=thread, scope=scope, budget=budget)
    return write_text_file(html_path, page)


def _filtered(analysis: Analysis, thread: str | None, scope: str | None) -> Analysis:
    return analysis.filter(thread=thread, scope=scope) if thread is not None or scope is not None else analysis


def _load(sources: Sequence[TraceSource] | None, analysis: Analysis) -> list[Trace]:
    if sources is None:
        sources = [Path(info.path) for info in analysis.traces if Path(info.path).exists()]
    traces = [s for s in sources if isinstance(s, Trace)]
    paths = [s for s in sources if not isinstance(s, Trace)]
    return traces + (load_traces(paths) if paths else [])


__all__ = ["render_html_report", "write_html_report"]
