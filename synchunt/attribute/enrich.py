"""Attribution of each detected sync: thread, Python stack and call site, op chain, scopes, what it waited on."""

from __future__ import annotations

import functools

import msgspec
import numpy as np

from synchunt.attribute.model import CallSite, Sync, Thread
from synchunt.detect import Detection, SetAside
from synchunt.detect.columns import Columns
from synchunt.impact import measure
from synchunt.rules import get_rule
from synchunt.sites import SCOPE_SEPARATOR, Frame, FrameFilter, parse_call_stack, split_annotations
from synchunt.trace import Trace, vocab


def attribute(trace: Trace, detection: Detection, frame_filter: FrameFilter) -> tuple[Sync, ...]:
    """One record per detected sync, with everything a reader needs to find and judge it.

    What depends only on the names along a sync's enclosing chain (the stack, its call site, the op chain and
    scopes) is worked out once per class of chain (`Columns.classes`), not once per sync."""
    records = detection.records
    impacts = measure(trace, detection)
    frame_filter = frame_filter.for_trace(trace.synchunt)  # decide by where the capture saw each file live
    thread = functools.cache(lambda pid, tid: Thread(tid=tid, pid=pid, name=str(trace.thread_name(pid, tid))))
    rank, path = trace.rank, str(trace.path)
    columns = Columns.of(trace)
    events = np.fromiter((sync.event for sync in records), np.int64, len(records))
    classes = columns.classes.of(events)
    own_cats = columns.cats[events].tolist()
    # Without Python frames a sync is placed by the nearest Call stack argument: its own or an enclosing event's.
    call_stacks = trace.table.coded("call_stack")
    with_stack = columns.nearest(events, call_stacks.codes >= 0)
    stack_codes = np.where(with_stack >= 0, call_stacks.codes[np.maximum(with_stack, 0)], -1).tolist()
    has_frames = functools.cache(lambda cls: any(c == vocab.PYTHON_FUNCTION for _, c in columns.classes.links(cls)))
    # worked out once per distinct chain (and Call stack)
    place = functools.cache(lambda cls, code: _place(frame_filter, columns.classes.links(cls),
                                                     call_stacks.vocabulary[code] if code >= 0 else None))
    kind = functools.cache(lambda code: get_rule(code).kind.value)
    out = []
    for sync, impact, cls, stack_code, own_cat in zip(records, impacts, classes.tolist(), stack_codes, own_cats,
                                                      strict=True):
        site, via, stack, ops, scope, scopes, step = place(cls, -1 if has_frames(cls) else stack_code)
        out.append(Sync(
            rule=sync.rule, kind=kind(sync.rule), confirmed=sync.confirmed, op=sync.op,
            op_chain=(*ops, sync.op) if own_cat == vocab.CPU_OP else ops, runtime=sync.runtime,
            thread=thread(sync.pid, sync.tid), ts_us=sync.ts_us, stall_us=sync.stall_us,
            stall_source=sync.stall_source, call_site=site, stack=stack, scope=scope, scope_chain=scopes, step=step,
            impact=impact if sync.confirmed else None, direction=sync.direction, rank=rank, trace=path, via=via))
    return tuple(out)


def _place(frame_filter: FrameFilter, along: tuple[tuple[str, str], ...], call_stack: str | None,
           ) -> tuple[CallSite | None, CallSite | None, tuple[Frame, ...], tuple[str, ...], str, tuple[str, ...],
                      str | None]:
    """From a sync's enclosing events (name, category; innermost first) and, without Python frames, its Call
    stack argument: where it happens and the user's frame that led there, the stack shown, the enclosing ops, the
    scope and its chain (outermost first), the step."""
    stack = [f for f in (Frame.from_kineto_name(n) for n, c in along if c == vocab.PYTHON_FUNCTION) if f is not None]
    ran = not stack and bool(call_stack)  # an older trace's Call stack: each frame at the line it was running
    if ran:
        stack = parse_call_stack(call_stack)
    stack = [frame_filter.canonical(frame) for frame in stack]
    ops = tuple(n for n, c in reversed(along) if c == vocab.CPU_OP and n not in vocab.DISPATCHER_STEPS)
    scopes, step = split_annotations([n for n, c in reversed(along) if c == vocab.USER_ANNOTATION])
    site, via = frame_filter.locate(stack)
    return (_trace_site(site, frame_filter, ran), _trace_site(via, frame_filter, ran),
            tuple(frame_filter.shown_stack(stack)), ops, SCOPE_SEPARATOR.join(scopes), tuple(scopes), step)


def _trace_site(frame: Frame | None, frame_filter: FrameFilter, ran: bool) -> CallSite | None:
    """A trace frame as a call site. A Python function event names the function's first line (resolved later
    where it can be); a Call stack names the line that was running, the line itself."""
    if frame is None:
        return None
    user = frame_filter.is_user(frame.file)
    if ran:
        return CallSite(frame.file, frame.line, frame.function, line_source="runtime", user=user,
                        line_note=RAN_LINE_NOTE)
    return CallSite(frame.file, frame.line, frame.function, def_line=frame.line, user=user, line_note=DEF_LINE_NOTE)


DEF_LINE_NOTE = "the trace names only the function's first line"
RAN_LINE_NOTE = "the trace's Call stack names the line that was running"


def set_aside_calls(trace: Trace, detection: Detection) -> tuple[SetAside, ...]:
    """The detection's set-aside calls, each with the name of its thread."""
    return tuple(msgspec.structs.replace(item, thread=str(trace.thread_name(item.pid, item.tid)))
                 for item in detection.set_aside)
