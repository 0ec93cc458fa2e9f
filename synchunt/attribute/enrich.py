"""Attribution of each detected sync: thread, Python stack and call site, op chain, scopes, what it waited on."""

from __future__ import annotations

import functools

import numpy as np

from synchunt.attribute.model import CallSite, SetAsideCall, Sync, Thread
from synchunt.detect import Detection
from synchunt.detect.columns import Columns
from synchunt.impact import measure
from synchunt.rules import get_rule
from synchunt.sites import SCOPE_SEPARATOR, Frame, FrameFilter, parse_call_stack, split_annotations
from synchunt.trace import Trace, vocab


def attribute(trace: Trace, detection: Detection, frame_filter: FrameFilter) -> tuple[Sync, ...]:
    """One record per detected sync, with everything a reader needs to find and judge it.

    The enclosing events of every sync are found at once (`Columns.chains`), and what depends only on the names
    along a chain (the stack, its call site, the op chain and scopes) is worked out once per distinct chain."""
    records = detection.records
    impacts = measure(trace, detection)
    frame_filter = frame_filter.for_trace(trace.synchunt)  # decide by where the capture saw each file live
    thread = functools.cache(lambda pid, tid: Thread(tid=tid, pid=pid, name=str(trace.thread_name(pid, tid))))
    rank, path = trace.rank, str(trace.path)
    columns = Columns.of(trace)
    events = np.fromiter((sync.event for sync in records), np.int64, len(records))
    chains = columns.chains(events)
    own_cats = columns.cats[events].tolist()
    place = functools.cache(functools.partial(_place, frame_filter))
    kind = functools.cache(lambda code: get_rule(code).kind.value)
    call_stacks = trace.table.coded("call_stack")
    out = []
    for sync, impact, chain, links, own_cat in zip(records, impacts, chains, columns.along(chains), own_cats,
                                                  strict=True):
        along = tuple(links)  # hashable: `place` is worked out once per distinct chain
        text = None
        if not any(c == vocab.PYTHON_FUNCTION for _, c in along):  # no Python frames: a Call stack argument
            codes = call_stacks.codes[[sync.event, *chain]].tolist()
            text = next((call_stacks.vocabulary[c] for c in codes if c >= 0), None)
        site, stack, ops, scope, scopes, step = place(along, text)
        out.append(Sync(
            rule=sync.rule, kind=kind(sync.rule), confirmed=sync.confirmed, op=sync.op,
            op_chain=(*ops, sync.op) if own_cat == vocab.CPU_OP else ops, runtime=sync.runtime,
            thread=thread(sync.pid, sync.tid), ts_us=sync.ts_us, stall_us=sync.stall_us,
            stall_source=sync.stall_source, call_site=site, stack=stack, scope=scope, scope_chain=scopes, step=step,
            impact=impact if sync.confirmed else None, direction=sync.direction, rank=rank, trace=path))
    return tuple(out)


def _place(frame_filter: FrameFilter, along: tuple[tuple[str, str], ...], call_stack: str | None,
           ) -> tuple[CallSite | None, tuple[Frame, ...], tuple[str, ...], str, tuple[str, ...], str | None]:
    """From a sync's enclosing events (name, category; innermost first) and, without Python frames, its Call
    stack argument: the call site, the stack shown, the enclosing ops, the scope and its chain (outermost first),
    the step."""
    stack = [f for f in (Frame.from_kineto_name(n) for n, c in along if c == vocab.PYTHON_FUNCTION) if f is not None]
    if not stack:
        stack = parse_call_stack(call_stack) if call_stack else []
    stack = [frame_filter.canonical(frame) for frame in stack]
    ops = tuple(n for n, c in reversed(along) if c == vocab.CPU_OP)
    scopes, step = split_annotations([n for n, c in reversed(along) if c == vocab.USER_ANNOTATION])
    site = frame_filter.call_site(stack)
    return (CallSite(site.file, site.line, site.function, def_line=site.line) if site else None,
            tuple(frame_filter.shown_stack(stack)), ops, SCOPE_SEPARATOR.join(scopes), tuple(scopes), step)


def set_aside_calls(trace: Trace, detection: Detection) -> tuple[SetAsideCall, ...]:
    return tuple(SetAsideCall(runtime=item.runtime, ts_us=item.ts_us, stall_us=item.stall_us, reason=item.reason,
                              thread=Thread(tid=item.tid, pid=item.pid,
                                            name=str(trace.thread_name(item.pid, item.tid))))
                 for item in detection.set_aside)
