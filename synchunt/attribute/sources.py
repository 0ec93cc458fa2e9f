"""What the user pointed at: trace files, per-rank folders, saved analyses, or objects already loaded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from synchunt.attribute.document import decode
from synchunt.attribute.model import Analysis
from synchunt.trace import Trace, load_traces
from synchunt.trace.decode import read_bytes

_ANALYSIS_HEAD = re.compile(rb'^\s*\{\s*"schema"\s*:\s*"synchunt\.analysis/')


def load_sources(sources: Any) -> tuple[list[Trace], list[Analysis]]:
    """Traces and saved analyses from paths (trace files, per-rank folders, ``--format json`` analyses) and
    already-loaded objects; a saved analysis is recognised by its leading ``schema`` key."""
    items: list[Any] = [sources] if isinstance(sources, Trace | Analysis | str | Path) else list(sources)
    traces = [s for s in items if isinstance(s, Trace)]
    saved: list[Analysis] = [s for s in items if isinstance(s, Analysis)]
    paths: list[Path] = []
    for item in items:
        if isinstance(item, Trace | Analysis):
            continue
        path = Path(item)
        if path.is_file():
            raw = read_bytes(path)
            if _ANALYSIS_HEAD.match(raw[:256]):
                saved.append(decode(raw))
                continue
        paths.append(path)
    if paths or not (traces or saved):
        traces.extend(load_traces(paths))
    return traces, saved
