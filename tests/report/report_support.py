"""Constants and helpers shared by the report tests (a module of its own: test modules import it by name)."""

from __future__ import annotations

import json
import re

# Each would run script, or break out of the data island, if the report built HTML from trace text.
HOSTILE_THREAD = 'sched</script><script>window.__pwned = "thread"; alert("thread")</script>'
HOSTILE_SCOPE = "layer_1\"'><img src=x onerror=\"window.__pwned='scope'\">"
HOSTILE_FUNCTION = "fn<script>document.body.setAttribute('data-pwned', 'fn')</script>&amp;\u2028"
HOSTILE_OP = "aten::cat</script><svg onload=\"window.__pwned='op'\">"
HOSTILE_LABEL = "<b onmouseover=alert(1)>masked</b>"


def data_island(page: str) -> dict:
    """The JSON data a rendered report carries."""
    match = re.search(r'<script type="application/json" id="synchunt-data">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match[1])


def html_report(analysis, traces=(), *, after=None, after_traces=(), thread=None, budget=None) -> str:
    """The HTML page of an analysis (and its comparison), with timelines from the given trace files."""
    from synchunt.render.html import render_page
    from synchunt.report import DEFAULT_BUDGET, build_report
    from synchunt.trace import Trace, load_trace

    def loaded(items):
        return [item if isinstance(item, Trace) else load_trace(item) for item in items]

    return render_page(build_report(analysis, loaded(traces), after=after, after_traces=loaded(after_traces),
                                    thread=thread, budget=budget or DEFAULT_BUDGET))
