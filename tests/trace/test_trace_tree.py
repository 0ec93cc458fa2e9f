"""The vectorized containment tree equals the stack sweep that defines it."""

from __future__ import annotations

import numpy as np
import pytest

from synchunt.trace import tree
from synchunt.trace.tree import containment, containment_reference


def random_nesting(rng: np.random.Generator, count: int, integer: bool) -> tuple[np.ndarray, np.ndarray]:
    """Intervals nested as a random call tree (siblings, children, zero-length leaves)."""
    ts: list[float] = []
    dur: list[float] = []
    stack = [(0.0, 1e7)]  # (start, end) of the open events
    t = 0.0
    while len(ts) < count and stack:
        hi = stack[-1][1]
        if len(stack) > 1 and (t >= hi - 1 or rng.random() < 0.25):
            stack.pop()
            t = max(t, hi) + float(rng.integers(0, 3))
            continue
        start = t + float(rng.integers(0, 4))
        length = float(rng.integers(0, max(1, int(min(hi - start, 400)))))
        ts.append(start)
        dur.append(length)
        if length > 2 and rng.random() < 0.5:
            stack.append((start, start + length))
            t = start
        else:
            t = start + length
    ts_arr, dur_arr = np.array(ts), np.array(dur)
    if integer:  # Kineto rounds to whole µs: a child may end just after its parent
        dur_arr = np.maximum(dur_arr + rng.integers(-1, 2, len(dur_arr)), 0)
    else:
        ts_arr = ts_arr + rng.random(len(ts_arr)) * 1e-3
    return ts_arr, dur_arr


@pytest.mark.parametrize("seed", range(40))
def test_vectorized_equals_reference_on_random_nestings(seed):
    rng = np.random.default_rng(seed)
    integer = seed % 2 == 0
    count = int(rng.integers(1, 1500))
    ts, dur = random_nesting(rng, count, integer)
    assert len(ts) == count
    if seed % 5 == 0:  # overlapping (not nested) events as well
        dur = dur + rng.integers(0, 30, len(dur))
    lanes = rng.integers(0, 3, len(ts))
    for eps in (0.0, 0.01, 1.0):
        got = containment(lanes, ts, dur, eps)
        want = containment_reference(lanes, ts, dur, eps)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("seed", range(6))
def test_rows_of_a_larger_table_get_row_parents(seed):
    """With ``rows``, the tree is indexed by the table's rows: the same tree, mapped, and other rows are roots."""
    rng = np.random.default_rng(seed)
    ts, dur = random_nesting(rng, 800, integer=seed % 2 == 0)
    lanes = rng.integers(0, 2, len(ts))
    size = len(ts) + 300
    rows = np.sort(rng.choice(size, len(ts), replace=False))
    parent, depth = containment(lanes, ts, dur, 1.0, rows=rows, size=size)
    local_parent, local_depth = containment(lanes, ts, dur, 1.0)
    assert np.array_equal(parent[rows], np.where(local_parent >= 0, rows[local_parent], -1))
    assert np.array_equal(depth[rows], local_depth)
    others = np.setdiff1d(np.arange(size), rows)
    assert (parent[others] == -1).all() and (depth[others] == 0).all()


def test_the_numpy_path_is_taken_on_nested_lanes(monkeypatch):
    taken = []
    original = tree._lane_vectorized

    def spy(*args):
        result = original(*args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(tree, "_lane_vectorized", spy)
    ts, dur = random_nesting(np.random.default_rng(7), 3000, integer=False)
    containment(np.zeros(len(ts), dtype=np.int64), ts, dur, 0.01)
    assert len(ts) == 3000 and taken == [True]


def test_ties_rounding_and_empty():
    ts = np.array([0.0, 0.0, 10.0, 10.0, 50.0])
    dur = np.array([100.0, 100.0, 41.0, 0.0, 10.0])  # 10+41 ends 1 µs after 50: tolerated with eps 1
    parent, depth = containment(np.zeros(5, dtype=np.int64), ts, dur, 1.0)
    assert parent.tolist() == [-1, 0, 1, 2, 1] and depth.tolist() == [0, 1, 2, 3, 2]
    empty = containment(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), 1.0)
    assert len(empty[0]) == 0 and len(empty[1]) == 0


@pytest.mark.parametrize("seed", range(6))
def test_sweep_order_is_the_lexicographic_order(seed):
    rng = np.random.default_rng(seed)
    count = 3000
    ts = rng.integers(0, 200, count).astype(float)  # many equal starts
    dur = rng.integers(0, 5, count).astype(float)  # and equal durations among them
    group = rng.integers(0, 1 + seed % 3, count)
    if seed % 2:
        order = np.argsort(ts, kind="stable")  # nearly sorted input, as traces are written
        ts, dur, group = ts[order], dur[order], group[order]
    assert np.array_equal(tree.sweep_order(group, ts, dur), np.lexsort((-dur, ts, group)))


def test_nearest_equals_one_walk_per_event():
    """The nearest of a row and its ancestors where a mask holds, for every row at once, as one walk per row."""
    rng = np.random.default_rng(3)
    ts, dur = random_nesting(rng, 2000, integer=False)
    parent, _ = containment(np.zeros(len(ts), dtype=np.int64), ts, dur, eps=0.01)
    rows = np.concatenate([rng.integers(0, len(ts), 300), [-1]])
    for share in (0.0, 0.05, 0.5, 1.0):
        mask = rng.random(len(ts)) < share
        expected = [next((a for a in [int(r), *tree.ancestors(parent, int(r))] if mask[a]), -1) if r >= 0 else -1
                    for r in rows]
        assert tree.nearest(parent, rows, mask).tolist() == expected
        for count in (1, 3, tree.FEW_ROWS, tree.FEW_ROWS + 1):  # rows that climb one by one, and a numpy step
            assert tree.nearest(parent, rows[:count], mask).tolist() == expected[:count]
    assert tree.nearest(parent, np.zeros(0, dtype=np.int64), mask).tolist() == []
    assert tree.nearest(np.full(4, -1), np.array([0, 3]), np.array([False, True, False, False])).tolist() == [-1, -1]
    cycle = np.roll(np.arange(12), -1)  # never made by `containment`, but a walk must still end
    assert tree.nearest(cycle, np.arange(12), np.zeros(12, dtype=bool)).tolist() == [-1] * 12


def test_ancestor_rows_are_the_rows_and_every_ancestor_once():
    rng = np.random.default_rng(4)
    ts, dur = random_nesting(rng, 2000, integer=False)
    parent, _ = containment(np.zeros(len(ts), dtype=np.int64), ts, dur, eps=0.01)
    for count in (0, 1, tree.FEW_ROWS, 300):  # rows that climb one by one, and numpy steps
        rows = np.concatenate([rng.integers(0, len(ts), count), [-1]])
        expected = sorted({a for r in rows.tolist() if r >= 0 for a in [r, *tree.ancestors(parent, r)]})
        assert tree.ancestor_rows(parent, rows).tolist() == expected
    assert tree.parents(parent, np.array([-1])).tolist() == [-1]
    assert tree.ancestor_rows(np.roll(np.arange(12), -1), np.arange(12)).tolist() == list(range(12))  # a cycle ends
