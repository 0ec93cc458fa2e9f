"""Detection + attribution cost as the number of syncs grows (it should grow linearly, not quadratically).

Builds synthetic GPU traces with N confirmed syncs (`aten::item` › `_local_scalar_dense` › `cudaMemcpyAsync` +
`cudaStreamSynchronize`, with a DtoH memcpy and ten kernels on the stream after each), for N and 4N, and times
`synchunt.analyze` on each (the trace already loaded), interleaved repeats, medians. Last line: the ratio of the
4N time to the N time (≈4 when linear).

    python benchmarks/analyze_scaling.py [--syncs 5000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from machine import Quietness, add_quiet_options


def synthetic_trace(syncs: int, path: Path) -> None:
    events = []
    correlation = 0
    for i in range(syncs):
        ts = i * 100
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::item", "pid": 1, "tid": 1, "ts": ts, "dur": 50})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::_local_scalar_dense", "pid": 1, "tid": 1,
                       "ts": ts + 1, "dur": 48})
        correlation += 1
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1,
                       "ts": ts + 2, "dur": 5, "args": {"correlation": correlation}})
        events.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7,
                       "ts": ts + 4, "dur": 2, "args": {"correlation": correlation, "stream": 7}})
        correlation += 1
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1,
                       "ts": ts + 8, "dur": 30, "args": {"correlation": correlation}})
        for k in range(10):
            correlation += 1
            events.append({"ph": "X", "cat": "kernel", "name": f"kernel_{k}", "pid": 0, "tid": 7, "ts": ts + 40 + k,
                           "dur": 1, "args": {"correlation": correlation, "stream": 7}})
    path.write_text(json.dumps({"traceEvents": events}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--syncs", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    add_quiet_options(parser)
    args = parser.parse_args()
    quiet = Quietness.before(args)

    import synchunt

    sizes = (args.syncs, 4 * args.syncs)
    with tempfile.TemporaryDirectory() as scratch:
        traces = {}
        for size in sizes:
            path = Path(scratch) / f"{size}.json"
            synthetic_trace(size, path)
            traces[size] = synchunt.load_trace(path)
        times: dict[int, list[float]] = {size: [] for size in sizes}
        for _ in range(args.repeats):
            for size in sizes:
                start = time.perf_counter()
                result = synchunt.analyze(traces[size])
                times[size].append(time.perf_counter() - start)
                assert result.summary["confirmed"] == size
    for size in sizes:
        median = statistics.median(times[size])
        print(f"{size:>7,} syncs, {len(traces[size].events):>9,} events: analyze {median:6.2f} s "
              f"({1e6 * median / size:.0f} µs per sync)")
    verdict = quiet.after()
    print(verdict.line)
    print(f"time(4N)/time(N)={statistics.median(times[sizes[1]]) / statistics.median(times[sizes[0]]):.2f}")
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())
