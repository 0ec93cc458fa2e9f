"""Process-wide tuning of a command-line run: the garbage collector, and how numpy's libraries load.

These are decisions about the interpreter process, not about any analysis, so they live here and the CLI only
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
# What a trace command loads numpy with: (variable, value, the variables that mean the user chose already). Each is
# read once, when numpy is loaded; OpenBLAS reads the first of its three that is set.
_NUMPY_SETTINGS = (("NUMPY_MADVISE_HUGEPAGE", "0", ("NUMPY_MADVISE_HUGEPAGE",)),
                   ("OPENBLAS_NUM_THREADS", "1", ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")))
# Cyclic garbage waits until this many more container objects have been made (whatever their size) to be freed.
YOUNG_COLLECTION_THRESHOLD = 100_000


def load_numpy_tuned() -> None:
    """Load numpy without huge-page advice and with one OpenBLAS thread, for each setting the user left alone (and
    unless numpy is loaded already).

    numpy advises huge pages for every array of 4 MB and more; where the kernel's THP defrag is ``madvise`` (the
    default of many distributions) the first touch of such memory can wait on a synchronous compaction when no
    huge page is free (numpy#31590). A trace's columns are allocated once and read a few times: the advice gains
    little. On the scale benchmark's traces (8 runs each, docs/benchmarks.md) it made the median cached
    re-analysis 0.36 -> 0.46 s and 0.46 -> 0.54 s, and a first analysis 2.45 -> 2.80 s.

    OpenBLAS starts a thread per core when it is loaded, and each spins for a while waiting for work; synchunt
    gives it none (no linear algebra), so on a machine with few cores that thread only takes the core another
    process wants: the cached re-analysis of the 253 MB CPU trace, 11 runs each at load 1.4-1.6, median 0.27 ->
    0.21 s (the same on an idle machine, where the spinning core is free), CPU time 0.24 -> 0.14 s.

    The variables are removed again at once, so that no process started from here (a gated target) inherits
    them.
    """
    if "numpy" in sys.modules:
        return
    chosen = [name for name, _, users in _NUMPY_SETTINGS if not any(user in os.environ for user in users)]
    os.environ.update({name: value for name, value, _ in _NUMPY_SETTINGS if name in chosen})
    try:
        import numpy  # noqa: F401  (numpy and OpenBLAS read the variables once, at load)
    finally:
        for name in chosen:
            os.environ.pop(name, None)


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
