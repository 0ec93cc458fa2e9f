"""Attribution of each detected sync: thread, Python stack and call site, op chain, scopes, what it waited on."""

from __future__ import annotations

import functools

from synchunt.attribute.model import CallSite, SetAsideCall, Sync, Thread
from synchunt.detect import Detection
from synchunt.impact import measure
from synchunt.rules import get_rule
from synchunt.sites import SCOPE_SEPARATOR, Frame, FrameFilter, parse_call_stack, split_annotations
from synchunt.trace import Trace, vocab
from synchunt.trace.tree import ancestors


def attribute(trace: Trace, detection: Detection, frame_filter: FrameFilter) -> tuple[Sync, ...]:
    """One record per detected sync, with everything a reader needs to find and judge it."""
    names, cats = trace.strings("name"), trace.strings("cat")
    parent = trace.column("parent")
    call_stacks = trace.values("call_stack")
    impacts = measure(trace, detection)
    frame_filter = frame_filter.for_trace(trace.synchunt)  # decide by where the capture saw each file live
    thread = functools.cache(lambda pid, tid: Thread(tid=tid, pid=pid, name=str(trace.thread_name(pid, tid))))
    records = []
    for sync, impact in zip(detection.records, impacts, strict=True):
        chain = ancestors(parent, sync.event)
        stack = [f for f in (Frame.from_kineto_name(names[a]) for a in chain if cats[a] == vocab.PYTHON_FUNCTION)
                 if f is not None]
        if not stack:
            text = next((call_stacks[a] for a in [sync.event, *chain] if isinstance(call_stacks[a], str)), None)
            stack = parse_call_stack(text) if text else []
        stack = [frame_filter.canonical(frame) for frame in stack]
        site = frame_filter.call_site(stack)
        ops = [names[a] for a in reversed(chain) if cats[a] == vocab.CPU_OP]
        if cats[sync.event] == vocab.CPU_OP:
            ops.append(sync.op)
        scopes, step = split_annotations([names[a] for a in reversed(chain) if cats[a] == vocab.USER_ANNOTATION])
        records.append(Sync(
            rule=sync.rule, kind=get_rule(sync.rule).kind.value, confirmed=sync.confirmed, op=sync.op,
            op_chain=tuple(ops), runtime=sync.runtime, thread=thread(sync.pid, sync.tid), ts_us=sync.ts_us,
            stall_us=sync.stall_us, stall_source=sync.stall_source,
            call_site=CallSite(site.file, site.line, site.function, def_line=site.line) if site else None,
            stack=tuple(frame_filter.shown_stack(stack)), scope=SCOPE_SEPARATOR.join(scopes),
            scope_chain=tuple(scopes), step=step,
            impact=impact if sync.confirmed else None,
            direction=sync.direction, rank=trace.rank, trace=str(trace.path)))
    return tuple(records)


def set_aside_calls(trace: Trace, detection: Detection) -> tuple[SetAsideCall, ...]:
    return tuple(SetAsideCall(runtime=item.runtime, ts_us=item.ts_us, stall_us=item.stall_us, reason=item.reason,
                              thread=Thread(tid=item.tid, pid=item.pid,
                                            name=str(trace.thread_name(item.pid, item.tid))))
                 for item in detection.set_aside)
