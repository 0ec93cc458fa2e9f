"""A sync whose every field holds a marked value, and what people read for each (tests of every output)."""

from __future__ import annotations

import msgspec

from synchunt.attribute import Analysis, CallSite, Sync, Thread, TraceInfo
from synchunt.impact.model import Activity, SyncImpact
from synchunt.sites import Frame

PROBE = Sync(
    rule="SH105", kind="data-dependent read", confirmed=True, op="aten::_unique2",
    op_chain=("aten::probe_outer", "aten::_unique2"), runtime="cudaProbeSynchronize",
    thread=Thread(tid=4242, pid=77, name="probe-thread"), ts_us=None, stall_us=4321.0,
    stall_source="probe stall source",
    call_site=CallSite("probelib/ops.py", 17, "probe_fn", def_line=10, line_source="def", user=False,
                       line_note="probe line note"),
    stack=(Frame("probelib/ops.py", 17, "probe_fn"), Frame("probelib/mid.py", 5, "probe_middle"),
           Frame("myapp/serve.py", 31, "serve_step")),
    scope="probe_scope", scope_chain=("probe_scope",), step="ProfilerStep#77",
    impact=SyncImpact(host_stall_us=4321.0, device_idle_us=5550.0, waited_on_count=1, waited_on=(
        Activity(event=1, name="probe_kernel", category="kernel", device=0, stream=7, start_us=1.0, dur_us=2.0,
                 correlation=None),)),
    direction="DtoH", rank=3, trace="probe-trace.json", signals=("guard",), collective_delay_us=666.0,
    via=CallSite("myapp/serve.py", 31, "serve_step", line_source="runtime"), phase="warm-up",
    device_branch="probe device branch")
# What people read for each field's marked value (the JSON carries the value itself).
SHOWN = {
    "rule": "SH105", "confirmed": "confirmed", "op_chain": "aten::probe_outer", "runtime": "cudaProbeSynchronize",
    "thread": "probe-thread", "ts_us": "seen by the guard only", "stall_us": "4.32 ms",
    "stall_source": "probe stall source", "call_site": "probelib/ops.py:17 probe_fn", "stack": "probe_middle",
    "scope": "probe_scope", "step": "ProfilerStep#77", "impact": "probe_kernel", "direction": "DtoH",
    "rank": "rank 3", "trace": "probe-trace.json", "signals": "guard only", "collective_delay_us": "666.0 µs",
    "via": "myapp/serve.py:31 serve_step", "phase": "warm-up", "device_branch": "probe device branch"}
INFO = TraceInfo(path="probe-trace.json", rank=3, device_activity=True, mode="confirmed", start_us=0.0,
                 end_us=10.0)
OTHER = msgspec.structs.replace(PROBE, call_site=CallSite("myapp/other.py", 3, "other", line_source="exact"),
                                via=None, thread=Thread(tid=1, pid=77, name="main"), scope="", scope_chain=(),
                                step=None, signals=("trace",), phase="steady", direction=None, stall_source="x",
                                ts_us=5.0, device_branch=None)


def probe_analysis() -> Analysis:
    # A second site, unlike the probe in every detail, so that none of the probe's details is said once for all.
    return Analysis((INFO,), (PROBE, OTHER), {"mode": "confirmed"})
