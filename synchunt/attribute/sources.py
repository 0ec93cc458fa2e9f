"""What the user pointed at: trace files, per-rank folders, saved analyses, or objects already loaded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from synchunt.attribute.document import decode
from synchunt.attribute.model import Analysis
from synchunt.errors import TraceError
from synchunt.trace import DEFAULT_OPTIONS, LoadOptions, Trace, load_traces
from synchunt.trace.source import head_bytes, read_bytes

_ANALYSIS_HEAD = re.compile(rb'^\s*\{\s*"schema"\s*:\s*"synchunt\.analysis/')


def split_sources(sources: Any) -> tuple[list[Trace], list[Analysis], list[Path]]:
    """Loaded traces, saved analyses (``--format json`` output, recognised by their leading ``schema`` key and
    read now) and trace paths still to load (files and per-rank folders)."""
    items: list[Any] = [sources] if isinstance(sources, Trace | Analysis | str | Path) else list(sources)
    traces = [s for s in items if isinstance(s, Trace)]
    saved: list[Analysis] = [s for s in items if isinstance(s, Analysis)]
    paths: list[Path] = []
    for item in items:
        if isinstance(item, Trace | Analysis):
            continue
        path = Path(item)
        if is_saved_analysis(path):
            saved.append(decode(read_bytes(path)))
        else:
            paths.append(path)
    if not (traces or saved or paths):
        raise TraceError("no trace given")
    return traces, saved, paths


def load_sources(sources: Any, load: LoadOptions = DEFAULT_OPTIONS) -> tuple[list[Trace], list[Analysis]]:
    """Traces (loaded) and saved analyses from paths and already-loaded objects."""
    traces, saved, paths = split_sources(sources)
    if paths:
        traces.extend(load_traces(paths, load))
    return traces, saved


def is_saved_analysis(path: Path) -> bool:
    """Whether ``path`` is a file holding a saved analysis (only its first bytes are read)."""
    if not path.is_file():
        return False
    try:
        return bool(_ANALYSIS_HEAD.match(head_bytes(path, 256)))
    except TraceError:
        return False
