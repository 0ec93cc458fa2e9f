"""Cost of ``synchunt.impact.measure`` as syncs and events grow (it should grow linearly, not quadratically).

Builds synthetic GPU traces in memory with N confirmed syncs and 11 events per sync (a D2H ``cudaMemcpyAsync`` +
``cudaStreamSynchronize`` and its copy; four ``cudaLaunchKernel`` + kernel pairs after it, alternating between
two streams; one host event in 97 on another thread), so N = 100,000 gives 1.1 M events. The detection records
are built with the trace (detection itself is timed by ``analyze_scaling.py``), and ``measure`` is timed for N
and 4N, interleaved repeats, medians of wall and CPU time (CPU time is steadier on a shared machine). Last line:
the ratio of the 4N CPU time to the N CPU time (≈4 when linear).

    python benchmarks/impact_scaling.py [--syncs 25000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from synchunt.detect import DetectedSync, Detection, Mode
from synchunt.trace.decode import DecodedTrace
from synchunt.trace.model import Trace, build

_EVENTS_PER_SYNC = 11


def synthetic(syncs: int) -> tuple[Trace, Detection]:
    n = syncs * _EVENTS_PER_SYNC
    base = np.arange(syncs, dtype=np.float64) * 100.0
    # per sync, in order: memcpy call, sync call, copy, then 4 × (launch, kernel)
    offsets = np.array([2, 8, 4, 40, 45, 50, 55, 60, 65, 70, 75], dtype=np.float64)
    durs = np.array([5, 30, 2, 2, 3, 2, 3, 2, 3, 2, 3], dtype=np.float64)
    cats = ["cuda_runtime", "cuda_runtime", "gpu_memcpy"] + ["cuda_runtime", "kernel"] * 4
    names = ["cudaMemcpyAsync", "cudaStreamSynchronize", "Memcpy DtoH (Device -> Pageable)"] + \
        ["cudaLaunchKernel", "kernel_k"] * 4
    device = np.array([False, False, True] + [False, True] * 4)
    ts = (base[:, None] + offsets[None, :]).ravel()
    correlation = np.arange(n, dtype=np.int64)
    # a kernel's correlation is its launch's; the copy's is the memcpy call's
    pair = correlation.reshape(syncs, _EVENTS_PER_SYNC)
    pair[:, 2] = pair[:, 0]
    pair[:, 4::2] = pair[:, 3::2]
    stream = np.where(np.tile(device, syncs), np.tile([7, 7, 7, 7, 7, 7, 20, 7, 7, 7, 20], syncs), -1)
    tid = np.where(np.tile(device, syncs), stream, 1)
    tid[(np.arange(n) % 97 == 3) & ~np.tile(device, syncs)] = 2  # now and then another thread launches
    columns = {
        "ph": ["X"] * n, "name": names * syncs, "cat": cats * syncs,
        "pid": np.where(np.tile(device, syncs), 0, 1).tolist(), "tid": tid.tolist(),
        "ts": ts, "dur": np.tile(durs, syncs), "correlation": pair.ravel(),
        "external_id": np.full(n, -1), "python_id": np.full(n, -1), "python_parent_id": np.full(n, -1),
        "stream": stream.astype(np.int64), "bytes": np.full(n, -1), "input_types": [None] * n,
        "concrete_inputs": [None] * n, "call_stack": [None] * n, "sync_kind": [None] * n, "meta_name": [None] * n,
    }
    trace = build(Path("synthetic.json"), DecodedTrace(columns=columns, metadata={}))
    rows = np.arange(syncs) * _EVENTS_PER_SYNC
    records = tuple(DetectedSync(event=int(r), rule="SH109", confirmed=True, op="aten::_local_scalar_dense",
                                 runtime="cudaMemcpyAsync + cudaStreamSynchronize",
                                 runtime_events=(int(r), int(r) + 1), ts_us=float(ts[r]), stall_us=35.0,
                                 stall_source="runtime call", direction="DtoH", pid=1, tid=1) for r in rows)
    return trace, Detection(mode=Mode.CONFIRMED, records=records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--syncs", type=int, default=25000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from synchunt.impact import measure

    sizes = (args.syncs, 4 * args.syncs)
    inputs = {size: synthetic(size) for size in sizes}
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
    print(f"CPU time ratio {sizes[1]}/{sizes[0]} syncs: {large / small:.2f} (4.00 = linear)")


if __name__ == "__main__":
    main()
