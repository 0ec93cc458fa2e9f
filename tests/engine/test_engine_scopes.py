"""The scopes a trace offers to filters are exactly the record_function scopes above at least one other event."""

from __future__ import annotations

import json
import random

import pytest

import synchunt
from synchunt.attribute.analyze import trace_info


def random_tree(rng: random.Random, count: int) -> list[dict]:
    """Nested events on one thread: scopes and ops mixed at every depth, some scopes empty."""
    events: list[dict] = []

    def grow(start: int, end: int, depth: int) -> None:
        t = start
        while t < end - 4 and len(events) < count:
            length = rng.randint(1, max(1, min(end - t - 2, 4000 >> depth)))
            cat = "user_annotation" if rng.random() < 0.5 else "cpu_op"
            name = f"{'scope' if cat == 'user_annotation' else 'aten::op'}_{rng.randint(0, 40)}"
            events.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": t, "dur": length,
                           "args": {}})
            if length > 8 and depth < 12 and rng.random() < 0.7:
                grow(t + 1, t + length - 1, depth + 1)
            t += length + rng.randint(1, 5)

    grow(0, 10**6, 0)
    return events


def enclosing_reference(trace) -> tuple[str, ...]:
    """Walk up from every event that is not a scope, naming each scope passed."""
    parents = [int(p) for p in trace.column("parent")]
    is_scope = [bool(s) for s in trace.in_categories(("user_annotation",))]
    names = [str(n) for n in trace.names[trace.name_codes]]
    found = set()
    for event, scope in enumerate(is_scope):
        if scope:
            continue
        above = parents[event]
        while above >= 0:
            if is_scope[above]:
                found.add(names[above])
            above = parents[above]
    return tuple(sorted(found))


@pytest.mark.parametrize("seed", range(12))
def test_scopes_holding_events_equal_a_walk_up_from_every_event(tmp_path, seed):
    rng = random.Random(seed)
    events = random_tree(rng, rng.randint(5, 1500))
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = synchunt.load_trace(path)
    want = enclosing_reference(trace)
    assert trace_info(trace, "latent").scopes == want
    all_scopes = {e["name"] for e in events if e["cat"] == "user_annotation"}
    assert set(want) <= all_scopes
