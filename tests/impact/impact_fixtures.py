"""Small hand-written Kineto traces: each event placed by hand, so every expected figure can be read off."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

HOST_PID = 100
MAIN = 100  # the thread that syncs
OTHER = 200  # another host thread


class KinetoTrace:
    """Builds a Kineto JSON trace event by event; correlation ids are handed out in order."""

    def __init__(self, *, rank: int | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self._correlation = 1000
        self.rank = rank
        self.thread_name(HOST_PID, MAIN, "thread 100 (python)")

    def thread_name(self, pid: int, tid: int, name: str) -> None:
        self.events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})

    def op(self, name: str, ts: float, dur: float, *, tid: int = MAIN) -> None:
        self.events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": HOST_PID, "tid": tid, "ts": ts,
                            "dur": dur, "args": {}})

    def runtime(self, name: str, ts: float, dur: float, *, tid: int = MAIN, cat: str = "cuda_runtime") -> int:
        self._correlation += 1
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": HOST_PID, "tid": tid, "ts": ts, "dur": dur,
                            "args": {"correlation": self._correlation}})
        return self._correlation

    def activity(self, name: str, ts: float, dur: float, *, correlation: int, device: int = 0, stream: int = 7,
                 cat: str = "kernel") -> None:
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": device, "tid": stream, "ts": ts, "dur": dur,
                            "args": {"correlation": correlation, "stream": stream, "device": device}})

    def kernel(self, name: str, launch_ts: float, start: float, dur: float, *, tid: int = MAIN, device: int = 0,
               stream: int = 7) -> int:
        """A ``cudaLaunchKernel`` at ``launch_ts`` (2 µs) and its kernel at ``start``."""
        corr = self.runtime("cudaLaunchKernel", launch_ts, 2, tid=tid)
        self.activity(name, start, dur, correlation=corr, device=device, stream=stream)
        return corr

    def item(self, ts: float, copy_start: float, returned: float, *, device: int = 0, stream: int = 7,
             tid: int = MAIN) -> None:
        """``x.item()``: a pageable D2H ``cudaMemcpyAsync`` (2 µs on the device at ``copy_start``) then a
        ``cudaStreamSynchronize`` that returns at ``returned``."""
        self.op("aten::item", ts, returned - ts + 1, tid=tid)
        self.op("aten::_local_scalar_dense", ts + 0.5, returned - ts, tid=tid)
        corr = self.runtime("cudaMemcpyAsync", ts + 1, 3, tid=tid)
        self.activity("Memcpy DtoH (Device -> Pageable)", copy_start, 2, correlation=corr, device=device,
                      stream=stream, cat="gpu_memcpy")
        self.runtime("cudaStreamSynchronize", ts + 5, returned - (ts + 5), tid=tid)

    def write(self, path: Path) -> Path:
        data: dict[str, Any] = {"schemaVersion": 1, "traceEvents": self.events}
        if self.rank is not None:
            data["distributedInfo"] = {"rank": self.rank, "world_size": 2}
        path.write_bytes(gzip.compress(json.dumps(data).encode()))
        return path


ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
ALL_GATHER = "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def write_two_ranks(folder: Path, *, rank1_syncs: bool = False) -> Path:
    """Rank 0 syncs (``.item()`` returns at 130) and only launches its all-reduce at 300 (start 310); rank 1
    entered the same all-reduce at 110 and waited inside it. Rank 0's second ``.item()`` returns at 410; it enters
    the all-gather at 430, rank 1 at 425. With ``rank1_syncs``, rank 1 has a sync of its own at 360, before the
    all-gather it enters first."""
    folder.mkdir()
    rank0 = KinetoTrace(rank=0)
    rank0.kernel("A", 10, 20, 100)
    rank0.item(30, copy_start=121, returned=130)
    rank0.kernel(ALL_REDUCE, 300, 310, 50)
    rank0.item(400, copy_start=401, returned=410)
    rank0.kernel(ALL_GATHER, 420, 430, 20, stream=20)
    rank1 = KinetoTrace(rank=1)
    rank1.kernel(ALL_REDUCE, 100, 110, 250)
    if rank1_syncs:
        rank1.item(360, copy_start=361, returned=370)
    rank1.kernel(ALL_GATHER, 415, 425, 25, stream=20)
    rank0.write(folder / "rank0.pt.trace.json.gz")
    rank1.write(folder / "rank1.pt.trace.json.gz")
    return folder
