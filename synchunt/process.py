"""Process-wide tuning of a command-line run: the garbage collector and numpy's huge-page advice.

Both are decisions about the interpreter process, not about any analysis, so they live here and the CLI only
asks for them around the command it runs (``tuned(command)``). Library callers are never tuned.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# Commands that read traces and analyses (a gate's --target runs in a process of its own).
TRACE_COMMANDS = frozenset({"analyze", "gate", "report", "compare", "annotate"})
_HUGE_PAGE_SETTING = "NUMPY_MADVISE_HUGEPAGE"
# Cyclic garbage waits until this many more container objects have been made (whatever their size) to be freed.
YOUNG_COLLECTION_THRESHOLD = 100_000


def numpy_without_huge_page_advice() -> None:
    """Load numpy with ``NUMPY_MADVISE_HUGEPAGE=0`` unless the user chose a setting (or numpy is loaded already).

    numpy advises huge pages for every array of 4 MB and more; where the kernel's THP defrag is ``madvise`` (the
    default of many distributions) the first touch of such memory can wait on a synchronous compaction when no
    huge page is free (numpy#31590). A trace's columns are allocated once and read a few times: the advice gains
    little. On the scale benchmark's traces (8 runs each, docs/benchmarks.md) it made the median cached
    re-analysis 0.36 -> 0.46 s and 0.46 -> 0.54 s, and a first analysis 2.45 -> 2.80 s. The variable is removed
    again at once, so that no process started from here (a gated target) inherits it.
    """
    if "numpy" in sys.modules or _HUGE_PAGE_SETTING in os.environ:
        return
    os.environ[_HUGE_PAGE_SETTING] = "0"
    try:
        import numpy  # noqa: F401  (numpy reads the variable once, at import)
    finally:
        os.environ.pop(_HUGE_PAGE_SETTING, None)


@contextmanager
def collector_for(command: str | None) -> Iterator[None]:
    """Around a trace command, in a process that ends with it: a rarer young-generation collection, and every
    object frozen at the end.

    An analysis makes hundreds of thousands of short-lived tuples and records and almost no cycles, so the
    collector's ~190 passes at CPython's default threshold (700 up to 3.12, 2000 in 3.13) found nothing to free and
    cost a cached re-analysis 15-35 ms and more in cache misses (0.41-0.44 -> 0.29-0.36 s here). Once the outputs
    are written and closed, freezing every object spares the interpreter's last collection at exit a walk of what
    the run made (the catalogue, numpy's and typer's modules, the analysis): 35-45 ms of every such command here.
    """
    if command not in TRACE_COMMANDS:
        yield
        return
    thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.freeze()
