"""One hand-built set of models every output format is snapshotted from (as ruff snapshots each format from one
set of diagnostics): three syncs (a confirmed one with its impact, a latent one, one without a Python frame), a
gate over them with a baseline, a comparison, the lint's findings and an audit."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from synchunt.attribute import Analysis, CallSite, Sync, Thread, TraceInfo
from synchunt.audit import Agreement, AuditResult, Cell, Signal
from synchunt.compare import compare
from synchunt.detect import SetAside
from synchunt.findings import Confidence, Edit, Finding, FindingSet, Rewrite, Severity
from synchunt.gate import Baseline, BaselineEntry, SyncKey, evaluate
from synchunt.impact.model import Activity, DeviceIdle, SyncImpact
from synchunt.sites import Frame, SiteCount

TODAY = dt.date(2026, 6, 30)
SCHEDULER = Thread(tid=4242, pid=4200, name="scheduler")
MASK_SITE = CallSite("pkg/pool.py", 24, "translate", def_line=18, line_source="runtime")
KERNEL = Activity(event=7, name="void gather_kernel<float>(...)", category="kernel", device=0, stream=7,
                  start_us=1000.0, dur_us=120.0, correlation=31)
NEXT = Activity(event=9, name="void attention_kernel(...)", category="kernel", device=0, stream=7, start_us=1300.0,
                dur_us=40.0, correlation=33)


def _sync(**fields: object) -> Sync:
    base = dict(rule="SH101", kind="data-dependent read", confirmed=True, op="aten::nonzero",
                op_chain=("aten::index", "aten::nonzero"), runtime="cudaMemcpyAsync + cudaStreamSynchronize",
                thread=SCHEDULER, ts_us=1010.0, stall_us=150.0, stall_source="runtime call", call_site=MASK_SITE,
                stack=(Frame("pkg/pool.py", 24, "translate"), Frame("pkg/scheduler.py", 88, "step")),
                scope="load › layer_0", scope_chain=("load", "layer_0"), step="ProfilerStep#1",
                impact=SyncImpact(host_stall_us=150.0, device_idle_us=140.0, waited_on=(KERNEL,),
                                  waited_on_count=1, waited_on_us=120.0,
                                  idle=(DeviceIdle(device=0, start_us=1120.0, end_us=1300.0, idle_us=140.0,
                                                   charged=True, reason="next launched by the blocked thread",
                                                   next_activity=NEXT),),
                                  scope="stream", called_us=1010.0, returned_us=1160.0),
                direction="DtoH", rank=0, trace="traces/gpu.pt.trace.json.gz", signals=("trace", "guard"))
    base.update(fields)
    return Sync(**base)  # type: ignore[arg-type]


def analysis() -> Analysis:
    records = (
        _sync(),
        _sync(ts_us=2010.0, stall_us=90.0, scope="load › layer_1", scope_chain=("load", "layer_1"),
              impact=SyncImpact(host_stall_us=90.0, device_idle_us=0.0, scope="stream")),
        _sync(rule="SH109", kind="data-dependent read", confirmed=False, op="aten::_local_scalar_dense",
              op_chain=("aten::item", "aten::_local_scalar_dense"), runtime="", ts_us=3000.0, stall_us=4.5,
              stall_source="op cpu time (latent)", call_site=CallSite("pkg/scheduler.py", 91, "step", def_line=80,
                                                                      line_source="exact"),
              stack=(Frame("pkg/scheduler.py", 91, "step"),), scope="", scope_chain=(), impact=None,
              direction=None, signals=("trace",)),
        _sync(rule="SH302", kind="explicit sync", op="cudaEventSynchronize", op_chain=(),
              runtime="cudaEventSynchronize", ts_us=4000.0, stall_us=30.0, call_site=None, stack=(), scope="",
              scope_chain=(), impact=SyncImpact(host_stall_us=30.0, device_idle_us=None, scope="event"),
              direction=None, signals=("trace",)),
    )
    info = TraceInfo(path="traces/gpu.pt.trace.json.gz", rank=0, device_activity=True, mode="confirmed",
                     start_us=0.0, end_us=5000.0, synchunt={"target": "demo", "label": "masked", "device": "cuda"},
                     threads=("4242", "scheduler"), scopes=("layer_0", "layer_1", "load"), events=120,
                     set_aside=(SetAside(event=9, runtime="cudaDeviceSynchronize", ts_us=4900.0, stall_us=12.0,
                                         pid=SCHEDULER.pid, tid=SCHEDULER.tid, thread=SCHEDULER.name,
                                         reason="torch.profiler synchronizes the device when its recording window "
                                                "closes"),))
    return Analysis((info,), records, {"mode": "auto"})


def after() -> Analysis:
    before = analysis()
    return before.with_records(before.records[2:])


def gate():  # type: ignore[no-untyped-def]
    baseline = Baseline((BaselineEntry(SyncKey("SH302", "<no Python frame>", "cudaEventSynchronize"),
                                       "waits for the prefetch event", max_count=1, line=4),
                         BaselineEntry(SyncKey("SH105", "pkg/old.py:dedupe", "aten::_unique2"), "removed", line=10)),
                        Path("synchunt-baseline.toml"))
    return evaluate(analysis(), max_syncs=1, baseline=baseline, today=TODAY, max_idle_us=100.0)


def comparison():  # type: ignore[no-untyped-def]
    return compare(analysis(), after())


def _tailored() -> Rewrite:
    return Rewrite(rule="SH101", pattern="modulo-mask-slice", title="a strided slice `x[r::n]` instead of the mask",
                   line=24, column=16, end_line=24, end_column=33, original="idx[idx % n == r]",
                   replacement="idx[r::n]", edits=(Edit(24, 16, 24, 33, "idx[r::n]"),),
                   condition="`idx` is whole runs of `n` consecutive values", safety="conditional", checked=True,
                   check="equal on 16 generated inputs")


def findings() -> FindingSet:
    return FindingSet((
        Finding("SH101", "`idx[idx % n == r]` indexes with a boolean mask (inside a loop)", "pkg/pool.py", 24, 16,
                24, 33, Severity.ERROR, Confidence.HIGH, "HostPool.load", "local = idx[idx % n == r] // n",
                fix=_tailored()),
        Finding("SH201", "`free.cpu()` copies to the host and waits", "pkg/alloc.py", 3, 5, 3, 15, Severity.WARNING,
                Confidence.MEDIUM, "free", "slots = free.cpu()"),
        Finding("SH109", "`x.item()` reads a device value", "pkg/m.py", 7, 1, severity=Severity.NOTE,
                confidence=Confidence.LOW),
        Finding("parse-error", "cannot parse as Python: invalid syntax", "pkg/broken.py", 1, 5,
                severity=Severity.ERROR, confidence=Confidence.HIGH, is_problem=True),
    ), tool="synchunt lint", files_checked=4, rule_codes=("SH101", "SH109", "SH201"))


def audit() -> AuditResult:
    seen = Signal(syncs=2, confirmed=0, latent=2, rules={"SH101": 2},
                  sites=(SiteCount("SH101", "aten::nonzero", "pkg/pool.py", 18, "translate", 2),), mode="latent")
    guard = Signal(syncs=2, confirmed=0, latent=2, rules={"SH101": 2},
                   sites=(SiteCount("SH101", "aten::index", "pkg/pool.py", 24, "translate", 2),), mode="latent")
    none = Signal(syncs=0, confirmed=0, latent=0, rules={}, sites=(), mode="latent")
    cells = (Cell("demo", "bad", "masked", seen, guard, Agreement.AGREE, expected_rules=("SH101",), seconds=0.5),
             Cell("demo", "fixed", "sliced", none, none, Agreement.AGREE, seconds=0.25))
    return AuditResult(device="cpu", trace_mode="latent", small=True, warmup=1, iterations=1, cells=cells,
                       seconds=0.75, meta={"torch": "2.13.0"})
