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
