"""How traces are loaded: workers, executor, cache and progress options, shared by the commands that read traces."""

from __future__ import annotations

import re
from enum import Enum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from synchunt.attribute import Analysis, FrameFilter
    from synchunt.trace import LoadOptions


class ExecutorChoice(str, Enum):
    local = "local"
    dask = "dask"


WorkersOpt = Annotated[int, typer.Option(
    "--workers", min=1, help="Worker processes: rank traces analysed in parallel, a big trace decoded in slices.")]
ExecutorOpt = Annotated[ExecutorChoice, typer.Option(
    "--executor", help="local: processes on this machine; dask: a dask.distributed cluster (see --scheduler).")]
SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", help="The dask scheduler's address (tcp://host:8786); without it --executor dask starts a "
    "local cluster of --workers processes.")]
CacheOpt = Annotated[bool, typer.Option(
    "--cache/--no-cache", help="Keep decoded traces in the cache folder, so re-analysis with other filters is "
    "fast.")]
CacheDirOpt = Annotated[Path | None, typer.Option(
    "--cache-dir", help="The cache folder (default: $SYNCHUNT_CACHE_DIR, else ~/.cache/synchunt/traces).")]
ProgressOpt = Annotated[bool, typer.Option(
    "--progress/--no-progress", help="Progress bars on stderr for long loads (only on a terminal).")]

_SAVED_ANALYSIS = re.compile(rb'^\s*\{\s*"schema"\s*:\s*"synchunt\.analysis/')


def load_options(workers: int = 1, executor: ExecutorChoice = ExecutorChoice.local, scheduler: str | None = None,
                 cache: bool = True, cache_dir: Path | None = None, progress: bool = True) -> LoadOptions:
    from synchunt.executor import ExecutorSpec
    from synchunt.progress import NULL_PROGRESS, RichProgress
    from synchunt.trace import LoadOptions

    kind = "dask" if executor is ExecutorChoice.dask else ("local" if workers > 1 else "serial")
    return LoadOptions(executor=ExecutorSpec(kind, workers, scheduler), cache=cache, cache_dir=cache_dir,
                       progress=RichProgress() if progress else NULL_PROGRESS)


def analyze_with(sources: list[Path], options: LoadOptions, *, mode: str, thread: str | None, scope: str | None,
                 frame_filter: FrameFilter) -> Analysis:
    """Analyse each trace where it is loaded (worker processes when asked), then merge with the saved analyses
    named; filters apply to the merged result, as for `synchunt.analyze`."""
    from synchunt.attribute import analyze
    from synchunt.trace import map_traces

    saved = [path for path in sources if _is_saved_analysis(path)]
    traces = [path for path in sources if path not in saved]
    per_trace: list[Any] = []
    if traces:
        per_trace = map_traces(traces, partial(analyze, mode=mode, frame_filter=frame_filter), options)
    return analyze([*saved, *per_trace], mode=mode, thread=thread, scope=scope, frame_filter=frame_filter)


def _is_saved_analysis(path: Path) -> bool:
    from synchunt.errors import TraceError
    from synchunt.trace.source import head_bytes

    if not path.is_file():
        return False
    try:
        return bool(_SAVED_ANALYSIS.match(head_bytes(path, 256)))
    except TraceError:
        return False
