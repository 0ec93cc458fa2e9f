"""How traces are loaded: workers, executor, cache and progress options, shared by the commands that read traces."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
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

MaxTraceBytesOpt = Annotated[int | None, typer.Option(
    "--max-trace-bytes", min=1, help="Refuse a trace that decompresses to more than this many bytes "
    "(default 8 GiB): a gzip bomb stops there.")]


def load_options(workers: int = 1, executor: ExecutorChoice = ExecutorChoice.local, scheduler: str | None = None,
                 cache: bool = True, cache_dir: Path | None = None, progress: bool = True,
                 max_trace_bytes: int | None = None) -> LoadOptions:
    from synchunt.executor import ExecutorSpec
    from synchunt.progress import NULL_PROGRESS, RichProgress
    from synchunt.trace import DEFAULT_MAX_BYTES, LoadOptions

    kind = "dask" if executor is ExecutorChoice.dask else ("local" if workers > 1 else "serial")
    return LoadOptions(executor=ExecutorSpec(kind, workers, scheduler), cache=cache, cache_dir=cache_dir,
                       max_bytes=max_trace_bytes or DEFAULT_MAX_BYTES,
                       progress=RichProgress() if progress and _on_terminal() else NULL_PROGRESS)


def _on_terminal() -> bool:
    """Progress bars only where someone watches (rich is not even imported otherwise)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def plain_load(max_trace_bytes: int | None) -> LoadOptions:
    """What the commands without loading options use: one process, no cache, no progress bars."""
    return load_options(cache=False, progress=False, max_trace_bytes=max_trace_bytes)
