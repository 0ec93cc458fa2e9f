"""Loading traces from files and per-rank folders: cached, in parallel where asked."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from synchunt.errors import TraceError
from synchunt.executor import Executor, ExecutorSpec, LocalExecutor, make_executor
from synchunt.progress import NULL_PROGRESS, Progress
from synchunt.trace.model import Trace
from synchunt.trace.schema import ALL_FIELDS, FieldSet
from synchunt.trace.source import DEFAULT_MAX_BYTES, check_file

TRACE_SUFFIXES = (".json", ".json.gz")
R = TypeVar("R")
# Below this size a trace is decoded in this process even when workers are available (startup would dominate).
PARALLEL_DECODE_BYTES = 64 << 20


@dataclass(frozen=True)
class LoadOptions:
    """How to load traces: the executor for many traces (and for slices of one big trace), the cache."""

    executor: ExecutorSpec = field(default_factory=ExecutorSpec)
    cache: bool = True
    cache_dir: Path | None = None  # None: the user's cache folder (see synchunt.cache_folder.default_cache_dir)
    max_bytes: int = DEFAULT_MAX_BYTES
    progress: Progress = field(default=NULL_PROGRESS, compare=False, repr=False)
    # every column of the trace model, or only what detection and attribution read (faster; see FieldSet)
    fields: FieldSet = ALL_FIELDS


DEFAULT_OPTIONS = LoadOptions(cache=False)


def load_trace(path: str | Path, options: LoadOptions = DEFAULT_OPTIONS) -> Trace:
    """Parse one Kineto trace (``.json`` or ``.json.gz``, or a folder holding exactly one).

    Raises :class:`synchunt.errors.TraceError` for anything that is not a readable trace.
    """
    path = Path(path)
    if path.is_dir():
        files = trace_files(path)
        if len(files) != 1:
            raise TraceError(f"{path} holds {len(files)} traces; use load_traces() for per-rank folders")
        path = files[0]
    check_file(path)
    if options.executor.parallel and path.stat().st_size >= PARALLEL_DECODE_BYTES:
        with _slice_pool(options.executor) as pool:
            return _load_one(path, options, pool)
    return _load_one(path, options, None)


def _slice_pool(spec: ExecutorSpec) -> Executor:
    """Workers for the slices of one trace: this process decodes slices too, so ``workers`` processes in all."""
    if spec.kind == "local":
        return LocalExecutor(spec.workers - 1)
    return make_executor(spec)


def load_traces(paths: Sequence[str | Path], options: LoadOptions = DEFAULT_OPTIONS) -> list[Trace]:
    """Parse every trace named, expanding folders of per-rank traces (sorted by rank, then name).

    With a parallel executor the traces load in worker processes and come back whole; to keep only a small
    result per trace (an analysis), use `map_traces`.
    """
    return map_traces(paths, _identity, options)


def map_traces(paths: Sequence[str | Path], reduce: Callable[[Trace], R],
               options: LoadOptions = DEFAULT_OPTIONS) -> list[R]:
    """Load each trace and apply ``reduce`` to it, in worker processes when the executor is parallel.

    ``reduce`` must be picklable (a module-level function or a functools.partial of one); results come back
    in the order of ``paths``, a folder's traces sorted by rank then name, so each result can be merged with
    its rank.
    """
    groups = expand(paths)
    files = [file for group in groups for file in group]
    if len(files) == 1:
        return [reduce(load_trace(files[0], options))]
    job = _Job(reduce, replace(options, executor=ExecutorSpec(), progress=NULL_PROGRESS))
    with options.progress.task("load traces", total=len(files)) as task:
        if options.executor.parallel:
            with make_executor(options.executor) as pool:
                results = []
                # every trace submitted at once: a worker that finishes early takes the next trace instead of
                # waiting for an earlier one to come back (inputs are paths, results small analyses)
                for result in pool.imap(job, files, window=len(files)):
                    results.append(result)
                    task.advance()
        else:
            results = []
            for file in files:
                results.append(job(file))
                task.advance()
    return _in_rank_order(groups, results)


def expand(paths: Sequence[str | Path]) -> list[list[Path]]:
    """The trace files named, one group per argument (a folder's group: the traces it holds). A file named twice
    (``run.json ./run.json``, a glob and a folder that both hold it) is read once, where first named: its syncs
    must not count twice."""
    if not paths:
        raise TraceError("no trace given")
    groups: list[list[Path]] = []
    seen: set[tuple[int, int] | Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = trace_files(path)
            if not found:
                raise TraceError(f"{path} holds no .json or .json.gz trace")
        elif path.exists():
            found = [path]
        else:
            raise TraceError(f"no such trace: {path}")
        fresh = [file for file in found if _first_time(file, seen)]
        if fresh:
            groups.append(fresh)
    return groups


def _first_time(file: Path, seen: set[tuple[int, int] | Path]) -> bool:
    """Whether ``file`` is named for the first time (by device and inode, so links and other spellings of one
    file are one; by resolved path where there is no inode to tell: a file system that gives 0, or no stat)."""
    try:
        info = file.stat()
        identity: tuple[int, int] | Path = (info.st_dev, info.st_ino) if info.st_ino else file.resolve()
    except OSError:
        identity = file.resolve()
    if identity in seen:
        return False
    seen.add(identity)
    return True


def trace_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(TRACE_SUFFIXES))


class _Job(msgspec.Struct, frozen=True):
    reduce: Callable[[Trace], Any]
    options: LoadOptions

    def __call__(self, path: Path) -> tuple[int | None, Any]:
        trace = _load_one(path, self.options, None)
        return trace.rank, self.reduce(trace)


def _identity(trace: Trace) -> Trace:
    return trace


def _load_one(path: Path, options: LoadOptions, pool: Executor | None) -> Trace:
    if options.cache:
        from synchunt.trace.cache import TraceCache

        cache = TraceCache(options.cache_dir)
        try:
            key = cache.key(path, options.fields)
        except OSError:  # unreadable: the decode below says why
            return _decoded(path, options, pool)
        cached = cache.get(path, options.fields, key)
        if cached is not None:
            return cached
        trace = _decoded(path, options, pool)
        cache.put(trace, options.fields, key)  # stored only if the file still has the content hashed first
        return trace
    return _decoded(path, options, pool)


def _decoded(path: Path, options: LoadOptions, pool: Executor | None) -> Trace:
    # Imported here: a cached trace needs none of the decoding machinery (slices, ranges, decoders).
    from synchunt.trace.decode import decode
    from synchunt.trace.model import build

    return build(path, decode(path, max_bytes=options.max_bytes, pool=pool, progress=options.progress,
                              fields=options.fields))


def _in_rank_order(groups: list[list[Path]], results: list[tuple[int | None, Any]]) -> list[Any]:
    """Results per argument in order; within a folder, by rank (unranked last), then file name."""
    ordered: list[Any] = []
    start = 0
    for group in groups:
        ranked = sorted(zip(group, results[start:start + len(group)], strict=True),
                        key=lambda item: (item[1][0] if item[1][0] is not None else 1 << 30, item[0].name))
        ordered.extend(result for _, (_, result) in ranked)
        start += len(group)
    return ordered
