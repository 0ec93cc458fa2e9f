"""Map a picklable function over items: serially, in a local process pool, or on a dask.distributed cluster.

Results always come back in input order. `imap` keeps at most ``window`` items in flight, so a caller that
streams large inputs (slices of a trace) holds a bounded amount of them. dask is imported only when asked for.

    with make_executor("local", workers=2) as pool:
        results = pool.map(analyse_one, paths)
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import msgspec

from synchunt.errors import UsageError

if TYPE_CHECKING:  # the pool's modules load only when a pool starts: a serial run need not pay for them
    import multiprocessing.context
    from concurrent.futures import Future

T = TypeVar("T")
R = TypeVar("R")
ExecutorKind = Literal["serial", "local", "dask"]


class ExecutorSpec(msgspec.Struct, frozen=True):
    """How to run work: ``serial`` (in this process), ``local`` (``workers`` processes) or ``dask``."""

    kind: ExecutorKind = "serial"
    workers: int = 1
    scheduler: str | None = None  # dask: the scheduler's address; None starts a LocalCluster of ``workers``

    def __post_init__(self) -> None:
        if self.kind not in ("serial", "local", "dask"):
            raise UsageError(f"unknown executor {self.kind!r}; use serial, local or dask")
        if self.workers < 1:
            raise UsageError("--workers must be at least 1")

    @property
    def parallel(self) -> bool:
        return self.kind == "dask" or (self.kind == "local" and self.workers > 1)


class Executor:
    """Serial execution; the base of the parallel executors."""

    workers = 1
    parallel = False  # items and results cross a process boundary (they are pickled)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        return list(self.imap(fn, items))

    def imap(self, fn: Callable[[T], R], items: Iterable[T], window: int | None = None) -> Iterator[R]:
        for item in items:
            yield fn(item)

    def submit(self, fn: Callable[..., R], *args: Any) -> Pending:
        """Start ``fn(*args)``; the result is ``.result()`` of what comes back (here: computed at once)."""
        return Finished(fn(*args))

    def close(self) -> None:
        """Release the workers (nothing to release here)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Pending(Protocol):
    """What ``submit`` returns: a concurrent or dask future, or a `Finished` result."""

    def done(self) -> bool: ...

    def result(self) -> Any: ...


class Finished(msgspec.Struct, frozen=True):
    """A result computed in this process, shaped like a finished future."""

    value: Any

    def done(self) -> bool:
        return True

    def result(self) -> Any:
        return self.value


class _WithArgs(msgspec.Struct, frozen=True):
    """``fn(item, *rest)`` as a picklable one-argument callable."""

    fn: Callable[..., Any]
    rest: tuple[Any, ...]

    def __call__(self, item: Any) -> Any:
        return self.fn(item, *self.rest)


class _FutureExecutor(Executor):
    parallel = True

    def _submit(self, fn: Callable[[T], R], item: T) -> Any:
        raise NotImplementedError

    def submit(self, fn: Callable[..., R], *args: Any) -> Pending:
        return self._submit(_WithArgs(fn, args[1:]), args[0])

    def _result(self, future: Any) -> Any:
        return future.result()

    def imap(self, fn: Callable[[T], R], items: Iterable[T], window: int | None = None) -> Iterator[R]:
        window = window or 2 * self.workers
        pending: deque[Any] = deque()
        try:
            for item in items:
                pending.append(self._submit(fn, item))
                if len(pending) >= window:
                    yield self._result(pending.popleft())
            while pending:
                yield self._result(pending.popleft())
        finally:
            for future in pending:
                future.cancel()


class LocalExecutor(_FutureExecutor):
    """A pool of worker processes on this machine."""

    def __init__(self, workers: int):
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context())

    def _submit(self, fn: Callable[[T], R], item: T) -> Future:
        return self._pool.submit(fn, item)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(_FutureExecutor):
    """Tasks on a dask.distributed cluster (the scheduler at ``address``, or a LocalCluster started here)."""

    def __init__(self, address: str | None, workers: int):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("--executor dask needs dask.distributed: pip install 'synchunt[dask]'") from None
        self._cluster = None
        try:
            if address is None:
                self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                             dashboard_address=None)
                self._client = Client(self._cluster)
            else:
                self._client = Client(address, timeout="10s")
        except (OSError, TimeoutError) as error:
            raise UsageError(f"cannot reach the dask scheduler {address}: {error}") from None
        self.workers = max(1, len(self._client.scheduler_info().get("workers", {})) or workers)

    def _submit(self, fn: Callable[[T], R], item: T) -> Any:
        return self._client.submit(fn, item, pure=False)

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_executor(kind: ExecutorKind | ExecutorSpec = "serial", workers: int = 1,
                  scheduler: str | None = None) -> Executor:
    spec = kind if isinstance(kind, ExecutorSpec) else ExecutorSpec(kind, workers, scheduler)
    if spec.kind == "dask":
        return DaskExecutor(spec.scheduler, spec.workers)
    if spec.kind == "local" and spec.workers > 1:
        return LocalExecutor(spec.workers)
    return Executor()


def _context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    # fork starts a worker in milliseconds; it is safe while this process runs no other thread.
    if sys.platform == "linux" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")
