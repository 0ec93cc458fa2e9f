"""The containment tree of host events: each event's parent and depth per (pid, tid), in one sorted sweep."""

from __future__ import annotations

import numpy as np


def containment(group: np.ndarray, ts: np.ndarray, dur: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Parent index (-1 for roots) and depth of each event, nesting by time within each ``group`` value.

    ``group`` identifies the (pid, tid) lane as an integer code. An event is a child of the innermost open
    event on its lane that it starts inside and does not outlast by more than ``eps`` µs (integer-µs traces
    round ends, so a child may appear to end a little after its parent). Ties on start time put the longer
    event first, so a parent precedes the children that start with it.
    """
    n = len(ts)
    parent = np.full(n, -1, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    if n == 0:
        return parent, depth
    order = np.lexsort((-dur, ts, group))
    end = ts + dur
    ts_list = ts[order].tolist()
    end_list = end[order].tolist()
    group_list = group[order].tolist()
    order_list = order.tolist()
    parent_sorted = [-1] * n
    depth_sorted = [0] * n
    stack: list[int] = []  # positions in sorted order
    current_group = None
    for pos in range(n):
        g = group_list[pos]
        if g != current_group:
            stack.clear()
            current_group = g
        start = ts_list[pos]
        stop = end_list[pos]
        while stack:
            top = stack[-1]
            if start < end_list[top] and stop <= end_list[top] + eps:
                break
            stack.pop()
        if stack:
            top = stack[-1]
            parent_sorted[pos] = order_list[top]
            depth_sorted[pos] = depth_sorted[top] + 1
        stack.append(pos)
    parent[order] = parent_sorted
    depth[order] = depth_sorted
    return parent, depth


def ancestors(parent: np.ndarray, index: int) -> list[int]:
    """Indices of the event's ancestors, innermost first."""
    chain: list[int] = []
    current = int(parent[index])
    while current >= 0:
        chain.append(current)
        current = int(parent[current])
    return chain
