"""Families of shape: JSON nesting depth, deep event stacks, huge names, many scopes and threads.

Each must finish in bounded time and memory, and an HTML report stays under a size bound however long the names.
"""

from __future__ import annotations

import random
from pathlib import Path

import hostile_kineto as k
from hostile_case import Builder, Case
from hostile_cmd import trace_case

REPORT_BOUND = 32 << 20  # bytes: a page of a tiny trace is ~5 MB (the plotly bundle); names must not multiply it


def cases(rng: random.Random) -> list[Case]:
    return [*nesting_cases(), *size_cases()]


def _deep(depth: int, leaf: str = "0") -> bytes:
    return b"[" * depth + leaf.encode() + b"]" * depth


def _deep_object(depth: int) -> bytes:
    return b'{"a":' * depth + b"0" + b"}" * depth


def _splice(doc: k.Doc, where: str, nested: bytes) -> bytes:
    """The trace's bytes with a deeply nested value spliced in at ``where`` (built as text: json cannot)."""
    marker = "@@NESTED@@"
    if where == "event-arg":
        doc["traceEvents"][5]["args"]["extra"] = marker
    elif where == "top-level":
        doc["extra"] = marker
    elif where == "synchunt":
        doc["synchunt"]["params"] = marker
    elif where == "device-properties":
        doc["deviceProperties"] = marker
    elif where == "event":
        doc["traceEvents"].insert(4, marker)
    elif where == "input-dims":
        doc["traceEvents"][5]["args"]["Input Dims"] = marker
    elif where == "concrete-inputs":
        doc["traceEvents"][5]["args"]["Concrete Inputs"] = marker
    return k.dumps(doc).replace(f'"{marker}"'.encode(), nested)


def nesting_cases() -> list[Case]:
    family = "nesting"
    out: list[Case] = []
    for depth in (100, 1_000, 10_000, 100_000):
        heavy = depth > 10_000
        for where in ("event-arg", "top-level", "synchunt", "device-properties", "event", "input-dims",
                      "concrete-inputs"):
            for shape, nested in (("list", _deep(depth)), ("object", _deep_object(depth))):
                command = "analyze-json" if (depth + len(where)) % 2 else "gate-text"
                out.append(trace_case(family, f"{where}-{shape}@{depth}", _splice(k.cpu_doc(), where, nested),
                                      command, heavy=heavy))
        out.append(trace_case(family, f"document-list@{depth}", _deep(depth), "gate-text", heavy=heavy))
    for depth, heavy in ((1_000, False), (10_000, False), (50_000, True)):
        for kind in ("ops", "frames", "scopes"):
            for command in ("analyze-json", "report") if heavy else ("analyze-json", "analyze-text", "report",
                                                                     "gate-github"):
                out.append(trace_case(family, f"stack-{kind}@{depth}", _stack_file(kind, depth), command,
                                      heavy=heavy, timeout_s=30 if heavy else 20, max_file_bytes=REPORT_BOUND))
    return out


def _stack_file(kind: str, depth: int) -> Builder:
    """``depth`` host events nested one inside the other on one thread, a sync at the bottom."""
    def build(folder: Path) -> None:
        span = 2 * depth + 100
        events = [k.process_name("python"), k.thread_name(1, "thread 1 (python)")]
        for level in range(depth):
            ts, dur = level, span - 2 * level
            if kind == "frames":
                events.append(k.op(f"deep.py({level + 1}): f{level}", ts, dur, cat="python_function",
                                   **{"Python id": level + 1, "Python parent id": level}))
            elif kind == "scopes":
                events.append(k.op(f"scope_{level}", ts, dur, cat="user_annotation"))
            else:
                events.append(k.op(f"aten::op{level}", ts, dur))
        events += [k.op("aten::index", depth + 10, 40), k.op("aten::nonzero", depth + 20, 10)]
        (folder / "t.json").write_bytes(k.dumps(k.kineto(events)))
    return build


def _long_names(scope: int, function: int, thread: int = 0, stack: int = 0) -> Builder:
    def build(folder: Path) -> None:
        doc = k.cpu_doc()
        events = doc["traceEvents"]
        events[2]["name"] = "s" * scope or "step"
        events[3]["name"] = f"model.py(12): {'f' * function or 'forward'}"
        if thread:
            doc["synchunt"]["threads"] = {"1": "t" * thread}
        if stack:
            events[5]["args"]["Call stack"] = "x.py(1): g;" * (stack // 11)
        (folder / "t.json").write_bytes(k.dumps(doc))
    return build


def _many(kind: str, count: int) -> Builder:
    """``count`` scopes, threads or syncs, each holding one sync; or ``count`` plain ops and no sync."""
    def build(folder: Path) -> None:
        events = [k.process_name("python")]
        for i in range(count):
            ts = 100 * i
            if kind == "scopes":
                events += [k.op(f"scope_{i}", ts, 50, cat="user_annotation"), k.op("aten::nonzero", ts + 10, 5)]
            elif kind == "threads":
                events += [k.thread_name(i + 1, f"worker-{i}"), k.op("aten::nonzero", ts, 5, tid=i + 1)]
            elif kind == "sites":
                events += [k.op(f"site_{i}.py({i + 1}): fn_{i}", ts, 50, cat="python_function",
                                **{"Python id": i + 1, "Python parent id": 0}), k.op("aten::nonzero", ts + 10, 5)]
            elif kind == "metadata":
                events.append(k.thread_name(1, f"name-{i}"))
            else:
                events.append(k.op("aten::add", ts, 5))
        if kind == "metadata":
            events.append(k.op("aten::nonzero", 10, 5))
        (folder / "t.json").write_bytes(k.dumps(k.kineto(events)))
    return build


def size_cases() -> list[Case]:
    family = "sizes"
    out: list[Case] = []
    commands = ("analyze-text", "analyze-json", "report", "gate-github", "compare-text")
    names = [("names-100KB", _long_names(100_000, 100_000), False),
             ("names-two-1MB", _long_names(1 << 20, 1 << 20), True),
             ("name-10MB-function", _long_names(0, 10 << 20), True),
             ("thread-name-1MB", _long_names(0, 0, thread=1 << 20), True),
             ("call-stack-1MB", _long_names(0, 0, stack=1 << 20), True),
             ("names-10KB-all", _long_names(10_000, 10_000, thread=10_000, stack=10_000), False)]
    for label, build, heavy in names:
        for command in commands[:3] if heavy else commands:  # the big ones: text, JSON and HTML
            out.append(trace_case(family, label, build, command, heavy=heavy, timeout_s=30 if heavy else 15,
                                  max_file_bytes=REPORT_BOUND))
    for kind, light, full in (("scopes", 1_000, 100_000), ("threads", 200, 10_000), ("sites", 300, 20_000),
                              ("metadata", 5_000, 200_000), ("plain-ops", 20_000, 400_000)):
        for count, heavy in ((light, False), (full, True)):
            for command in commands[:3] if heavy else commands:
                out.append(trace_case(family, f"many-{kind}@{count}", _many(kind, count), command, heavy=heavy,
                                      timeout_s=30 if heavy else 20, max_file_bytes=REPORT_BOUND))
    return out
