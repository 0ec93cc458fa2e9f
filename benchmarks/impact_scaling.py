"""Cost of ``synchunt.impact.measure`` as syncs and events grow (it should grow linearly, not quadratically).

Writes synthetic GPU traces with N confirmed syncs and 11 events per sync (a D2H ``cudaMemcpyAsync`` +
``cudaStreamSynchronize`` and its copy; four ``cudaLaunchKernel`` + kernel pairs after it, alternating between
two streams; one sync in 97 on another thread), so N = 100,000 gives 1.1 M events. Each is loaded and detected
untimed (detection is timed by ``analyze_scaling.py``), and ``measure`` is timed for N
and 4N, interleaved repeats, medians of wall and CPU time (CPU time is steadier on a shared machine). Last line:
the ratio of the 4N CPU time to the N CPU time (≈4 when linear).

    python benchmarks/impact_scaling.py [--syncs 25000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec
from machine import Quietness, add_quiet_options

from synchunt.detect import Detection, detect
from synchunt.trace import Trace, load_trace

_EVENTS_PER_SYNC = 11


def synthetic(syncs: int, folder: Path) -> tuple[Trace, Detection]:
    """A trace file of ``syncs`` syncs (written, then loaded and detected as any trace is)."""
    events = []
    correlation = 0
    for i in range(syncs):
        ts = i * 100.0
        host_tid = 2 if i % 97 == 3 else 1  # now and then another thread syncs
        correlation += 1
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": host_tid,
                       "ts": ts + 2, "dur": 5, "args": {"correlation": correlation}})
        events.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0,
                       "tid": 7, "ts": ts + 4, "dur": 2, "args": {"correlation": correlation, "stream": 7}})
        correlation += 1
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1,
                       "tid": host_tid, "ts": ts + 8, "dur": 30, "args": {"correlation": correlation}})
        for k in range(4):  # launches after the sync, alternating between two streams
            correlation += 1
            stream = 20 if k % 2 else 7
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                           "ts": ts + 40 + 10 * k, "dur": 2, "args": {"correlation": correlation}})
            events.append({"ph": "X", "cat": "kernel", "name": "kernel_k", "pid": 0, "tid": stream,
                           "ts": ts + 45 + 10 * k, "dur": 3, "args": {"correlation": correlation,
                                                                     "stream": stream}})
    path = folder / f"impact-{syncs}.json"
    path.write_bytes(msgspec.json.encode({"traceEvents": events}))
    trace = load_trace(path)
    return trace, detect(trace)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--syncs", type=int, default=25000)
    parser.add_argument("--repeats", type=int, default=3)
    add_quiet_options(parser)
    args = parser.parse_args()
    quiet = Quietness.before(args)

    from synchunt.impact import measure

    sizes = (args.syncs, 4 * args.syncs)
    with tempfile.TemporaryDirectory() as scratch:
        inputs = {size: synthetic(size, Path(scratch)) for size in sizes}
    times: dict[int, list[float]] = {size: [] for size in sizes}
    cpu: dict[int, list[float]] = {size: [] for size in sizes}
    idle: dict[int, float] = {}
    for _ in range(args.repeats):
        for size in sizes:
            trace, detection = inputs[size]
            start, start_cpu = time.perf_counter(), time.process_time()
            impacts = measure(trace, detection)
            times[size].append(time.perf_counter() - start)
            cpu[size].append(time.process_time() - start_cpu)
            idle[size] = sum(i.device_idle_us or 0.0 for i in impacts)
    for size in sizes:
        events = len(inputs[size][0].events)
        print(f"{size:>7} syncs  {events:>9} events  measure {statistics.median(times[size]):7.2f} s wall, "
              f"{statistics.median(cpu[size]):7.2f} s CPU (medians of {args.repeats})  "
              f"idle charged {idle[size] / 1e3:.1f} ms")
    small, large = (statistics.median(cpu[s]) for s in sizes)
    verdict = quiet.after()
    print(verdict.line)
    print(f"CPU time ratio {sizes[1]}/{sizes[0]} syncs: {large / small:.2f} (4.00 = linear)")
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())
