"""Fixtures for the trace tests: Kineto-layout writers and a real torch profiler trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def kineto_layout(events: list[dict], **top) -> bytes:
    """A trace written the way Kineto writes it: each top-level event on its own lines at a 2-space indent."""
    head = "{\n" + "".join(f'  "{k}": {json.dumps(v)},\n' for k, v in {"schemaVersion": 1, **top}.items())
    body = ",\n".join("  {\n    " + json.dumps(e)[1:-1].replace(', "args"', ',\n    "args"') + "\n  }"
                      for e in events)
    return (head + '  "traceEvents": [\n' + body + '\n  ],\n  "traceName": "t.json"\n}\n').encode()


def one_line(events: list[dict], **top) -> bytes:
    return json.dumps({"schemaVersion": 1, **top, "traceEvents": events}).encode()


def op(name, ts, dur, cat="cpu_op", tid=1, pid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def many_events(count: int) -> list[dict]:
    """Nested ops on two threads with thread names, a sync-like op, and arguments of every kind."""
    events = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": t, "args": {"name": f"thread {t}"}}
              for t in (1, 2)]
    for i in range(count):
        base = i * 100.0
        tid = 1 + i % 2
        events.append(op("outer", base, 90, tid=tid, **{"External id": i}))
        events.append(op("aten::nonzero" if i % 7 == 0 else "aten::add", base + 10, 30, tid=tid,
                         **{"Concrete Inputs": ["", str(i % 3)], "Input type": ["float", "Scalar"],
                            "External id": i + 1}))
        events.append(op(f"file.py({i % 5}): fn", base + 12, 5, cat="python_function", tid=tid,
                         **{"Python id": i, "Python parent id": None if i % 3 == 0 else i - 1}))
    return events


@pytest.fixture(scope="session")
def torch_trace(tmp_path_factory) -> Path:
    """A real with-stack CPU trace written by torch.profiler in this session."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    path = tmp_path_factory.mktemp("torch") / "cpu.pt.trace.json"
    x = torch.arange(64.0)
    with profile(activities=[ProfilerActivity.CPU], with_stack=True, record_shapes=True) as prof:
        for _ in range(30):
            y = x * 2 + 1
            x = x + y[y > 3].sum()
    prof.export_chrome_trace(str(path))
    return path
