"""A small GPU trace, each event placed by hand, for what the report draws from device activity: one call site
reached by two Python paths that sync in different ops, the work each sync waited for, the idle it caused, and a
stall over 1,000 µs (so that the stall axes read ms)."""

from __future__ import annotations

from pathlib import Path

from impact_fixtures import HOST_PID, MAIN, KinetoTrace

SITE_FILE = "app.py"
SITE_LINE = 30
ITEM_IDLE_US = 187.0  # the first sync's copy ends at 123; the next kernel starts at 310
NONZERO_IDLE_US = 217.0  # the second's copy ends at 150_393; the next kernel starts at 150_610
LONG_STALL_US = 150_000  # the second sync waits for a 150 ms kernel


def frame(trace: KinetoTrace, file: str, line: int, function: str, ts: float, dur: float) -> None:
    trace.events.append({"ph": "X", "cat": "python_function", "name": f"{file}({line}): {function}",
                         "pid": HOST_PID, "tid": MAIN, "ts": ts, "dur": dur, "args": {}})


def write_gpu_trace(path: Path, *, thread: str | None = None) -> Path:
    """``check()`` at app.py:30 syncs twice: called from ``main`` it reads ``x.item()`` (SH109) after a 100 µs
    kernel; called through ``helper`` it tests ``if x:`` (``is_nonzero``, SH110) after a 150 ms kernel. After each,
    the device sits idle until the thread launches its next kernel."""
    trace = KinetoTrace()
    if thread is not None:
        trace.events[0]["args"]["name"] = thread  # the syncing thread's name (metadata event)
    frame(trace, SITE_FILE, 5, "main", 0, 151_000)
    trace.kernel("void gemm_kernel<128>(float*)", 10, 20, 100)
    frame(trace, SITE_FILE, SITE_LINE, "check", 25, 110)
    trace.item(30, copy_start=121, returned=130)
    trace.kernel("void relu_kernel(float*)", 300, 310, 50)
    frame(trace, SITE_FILE, 40, "helper", 370, 150_100)
    trace.kernel("void attention_kernel<64>(half*)", 380, 390, LONG_STALL_US)
    frame(trace, SITE_FILE, SITE_LINE, "check", 395, 150_010)
    trace.op("aten::is_nonzero", 399, LONG_STALL_US + 3)
    trace.item(400, copy_start=150_391, returned=150_400)
    trace.kernel("void softmax_kernel(half*)", 150_600, 150_610, 40)
    return trace.write(path)
