"""The containment tree of host events: each event's parent and depth per (pid, tid) lane, vectorized.

The semantics are those of a stack sweep over each lane's events sorted by start (longer first on ties): an
event is a child of the innermost open event that it starts inside and does not outlast by more than ``eps`` µs
(integer-µs traces round ends, so a child may appear to end a little after its parent). `containment_reference`
is that sweep in plain Python; `containment` computes the same result with numpy:

* ``pop[j]``: the first later event that ``j`` does not contain — the first one starting at or after j's end
  (a binary search), or the first one ending more than ``eps`` after it (a next-greater search);
* the depth of ``k`` is the number of earlier events still open after ``k``'s pops (``pop[j] > k``), its parent
  the latest earlier event one level up.

This equals the sweep whenever each pop removes a top slice of the stack; where an event is kept below a removed
one (overlapping, not nested, events), that lane is handed to the sweep. Device events are lanes of their own.
"""

from __future__ import annotations

import numpy as np


def containment(group: np.ndarray, ts: np.ndarray, dur: np.ndarray, eps: float, rows: np.ndarray | None = None,
                size: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Parent index (-1 for roots) and depth of each event, nesting by time within each ``group`` value.

    ``rows``: each event's row in a table of ``size`` rows; the parents are then rows of that table, and the
    arrays have ``size`` entries (rows not given are roots at depth 0), so the caller has nothing to scatter."""
    n = len(ts)
    total = n if rows is None else size
    parent = np.full(total, -1, dtype=np.int64)
    depth = np.zeros(total, dtype=np.int64)
    if n == 0:
        return parent, depth
    order = sweep_order(group, ts, dur)
    labels = order if rows is None else rows[order]  # the output index of each event, in sweep order
    for lo, hi in _group_bounds(group, order):
        if hi - lo == 1:
            continue
        positions, members = order[lo:hi], labels[lo:hi]
        start = ts[positions]
        end = start + dur[positions]
        lane = _lane_vectorized(start, end, eps)
        lane_parent, lane_depth = lane if lane is not None else _lane_sweep(start, end, eps)
        parent[members] = np.append(members, -1)[lane_parent]  # a root's -1 picks the appended -1
        depth[members] = lane_depth
    return parent, depth


def _group_bounds(group: np.ndarray, order: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of each group's run in ``order`` (which sorts by group first)."""
    n = len(order)
    if group.min() == group.max():  # one lane: no gather of the groups in sweep order
        return [(0, n)]
    sorted_group = group[order]
    cuts = (np.flatnonzero(sorted_group[1:] != sorted_group[:-1]) + 1).tolist()
    return list(zip([0, *cuts], [*cuts, n], strict=True))


def sweep_order(group: np.ndarray, ts: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """``np.lexsort((-dur, ts, group))``, faster on traces: one stable sort by start (traces are written nearly
    in order, which a stable sort handles in about one pass), longer first only within runs of equal starts, then
    a stable sort by group."""
    order = np.argsort(ts, kind="stable")
    start = ts[order]
    tied = np.flatnonzero(start[1:] == start[:-1])
    if len(tied):
        in_run = np.zeros(len(order), dtype=bool)
        in_run[tied] = in_run[tied + 1] = True
        members = np.flatnonzero(in_run)  # every position in a run of equal starts
        run = np.cumsum(np.concatenate(([True], start[1:] != start[:-1])))[members]
        within = order[members]
        order[members] = within[np.lexsort((-dur[within], run))]  # stable: equal durations keep file order
    if len(group) and group.min() != group.max():
        order = order[np.argsort(group[order], kind="stable")]
    return order


def containment_reference(group: np.ndarray, ts: np.ndarray, dur: np.ndarray,
                          eps: float) -> tuple[np.ndarray, np.ndarray]:
    """The same tree by an explicit stack sweep (the definition `containment` is tested against)."""
    n = len(ts)
    parent = np.full(n, -1, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    if n == 0:
        return parent, depth
    order = np.lexsort((-dur, ts, group))
    sorted_group = group[order]
    cuts = np.flatnonzero(sorted_group[1:] != sorted_group[:-1]) + 1
    bounds = np.concatenate(([0], cuts, [n]))
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        members = order[lo:hi]
        start = ts[members]
        lane_parent, lane_depth = _lane_sweep(start, start + dur[members], eps)
        parent[members] = np.where(lane_parent >= 0, members[np.maximum(lane_parent, 0)], -1)
        depth[members] = lane_depth
    return parent, depth


def _lane_sweep(start: np.ndarray, end: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    starts, ends = start.tolist(), end.tolist()
    parent = [-1] * len(starts)
    depth = [0] * len(starts)
    stack: list[int] = []
    for pos, (begin, stop) in enumerate(zip(starts, ends, strict=True)):
        while stack and not (begin < ends[stack[-1]] and stop <= ends[stack[-1]] + eps):
            stack.pop()
        if stack:
            parent[pos] = stack[-1]
            depth[pos] = depth[stack[-1]] + 1
        stack.append(pos)
    return np.array(parent, dtype=np.int64), np.array(depth, dtype=np.int64)


def _lane_vectorized(start: np.ndarray, end: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray] | None:
    """One lane (sorted by start) in numpy; None when the lane needs the sweep (see the module docstring)."""
    m = len(start)
    ends_after = np.arange(1, m + 1, dtype=_index_type(m + 1))
    # An event that ends before the next one starts (a leaf: most events) pops at the next one; the binary search
    # is left to the others.
    searched = np.flatnonzero(start[1:] < end[:-1])
    if len(searched):
        ends_after[searched] = np.maximum(np.searchsorted(start, end[searched], side="left"), searched + 1)
    tree = _tree_of(ends_after)
    # When no event outlasts an ancestor by more than eps, the binary search alone is the pop.
    if tree is not None and np.all(_subtree_max(end, *tree) <= end + eps):
        return tree[:2]
    # Ranks keep the next-greater search exact on int32 tables (end + eps compared as a rank, not a float).
    sorted_end = np.sort(end)
    end_rank = np.searchsorted(sorted_end, end, side="left").astype(np.int32)
    limit_rank = (np.searchsorted(sorted_end, end + eps, side="right") - 1).astype(np.int32)
    tree = _tree_of(np.minimum(ends_after, _first_greater_after(end_rank, limit_rank)))
    return tree[:2] if tree is not None else None


def _tree_of(pop: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]] | None:
    """Parent and depth from each event's pop, and the events per depth (`_levels`); None when some pop would
    leave a hole in the stack."""
    m = len(pop)
    kind = _index_type(m + 1)
    index = np.arange(m, dtype=kind)
    # Events still open at k, below it: k minus the events popped at or before k (every pop lies past its event,
    # in 1..m, so a count per pop and a running sum give them without sorting).
    depth = index - np.cumsum(np.bincount(pop, minlength=m + 1)[:m], dtype=kind)
    order, levels = _levels(depth)
    if any(len(level) == 0 for level in levels):
        return None  # a depth with no event: the pops left holes
    parent = _latest_one_level_up(depth, order)
    # Each pop must remove a top slice of the stack: every event popped by k lies above k's parent. An event that
    # pops at the next one (a leaf) always does (that next one is not its child), so only the others are checked.
    index += 1
    popped = np.flatnonzero((pop < m) & (pop != index))
    if len(popped):
        targets = pop[popped]
        lowest = np.full(m, m, dtype=kind)
        np.minimum.at(lowest, targets, popped.astype(kind))
        hit = np.flatnonzero(lowest < m)
        if np.any(parent[hit] >= lowest[hit]):
            return None
    return parent, depth, levels


def _latest_one_level_up(depth: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Each event's latest earlier event one level up (-1 at depth 0); ``order``: the events by depth, each level
    ascending.

    A depth rises by at most 1 from one event to the next, so an event one level deeper than the one before it
    has that one as its parent, and any other event has the parent of the event before it on its level (no event
    one level up lies between them, else the depth would have risen through their level between them): a running
    maximum along ``order`` carries each level's parents forward, with no search."""
    m = len(depth)
    kind = _index_type(m)
    own = np.empty(m, dtype=kind)  # the parent where the event before says it, else -2 (inherited)
    own[0] = -1
    own[1:] = np.where(depth[1:] > depth[:-1], np.arange(m - 1, dtype=kind), -2)
    own[depth == 0] = -1
    in_order = own[order]
    carried = np.where(in_order != -2, np.arange(m, dtype=kind), 0)  # each level starts with a first child or a root
    np.maximum.accumulate(carried, out=carried)
    parent = np.empty(m, dtype=kind)
    parent[order] = in_order[carried]
    return parent


def _index_type(count: int) -> type:
    """int32 for positions below ``count`` where it holds them: half the memory of int64 on every pass."""
    return np.int32 if count < 2**31 else np.int64


def _levels(depth: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The events by depth, each level ascending (a stable sort on small ints is a radix sort), and that order
    split per depth."""
    order = np.argsort(depth.astype(np.int16) if depth.max(initial=0) < 2**15 else depth, kind="stable")
    counts = np.bincount(depth)
    return order, np.split(order, np.cumsum(counts)[:-1])


def _subtree_max(end: np.ndarray, parent: np.ndarray, depth: np.ndarray,
                 levels: list[np.ndarray]) -> np.ndarray:
    """Each event's latest end over itself and its descendants (deepest level first; ``levels``: `_levels`)."""
    latest = end.copy()
    for level in reversed(levels[1:]):
        np.maximum.at(latest, parent[level], latest[level])
    return latest


def _range_max_tables(values: np.ndarray) -> list[np.ndarray]:
    """Sparse table: level L holds the max of each window of 2**L values."""
    tables = [values]
    width = 1
    while 2 * width <= len(values):
        previous = tables[-1]
        tables.append(np.maximum(previous[:-width], previous[width:]))
        width *= 2
    return tables


def _first_greater_after(values: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """For each j: the first k > j with values[k] > limit[j] (len(values) when none)."""
    m = len(values)
    tables = _range_max_tables(values)
    pos = np.arange(1, m + 1, dtype=np.int64)
    for level in range(len(tables) - 1, -1, -1):
        width = 1 << level
        table = tables[level]
        can = np.flatnonzero(pos + width <= m)
        if len(can) == 0:
            continue
        jump = table[pos[can]] <= limit[can]
        pos[can[jump]] += width
    return pos


def ancestors(parent: np.ndarray, index: int) -> list[int]:
    """Indices of the event's ancestors, innermost first."""
    chain: list[int] = []
    current = int(parent[index])
    while current >= 0:
        chain.append(current)
        current = int(parent[current])
    return chain


FEW_ROWS = 8  # a walk up the tree with at most this many rows left goes one row at a time


def parents(parent: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Each row's parent (-1 for a root, and for a row of -1: no event)."""
    rows = np.asarray(rows, dtype=np.int64)
    return np.where(rows >= 0, parent[np.maximum(rows, 0)], -1) if len(rows) else rows


def ancestor_rows(parent: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Every distinct row among ``rows`` (those ≥ 0) and their ancestors, ascending: one numpy step per tree
    level, then one Python step per event for the last few chains (cheaper on a deep one)."""
    seen = np.zeros(len(parent), dtype=bool)
    current = np.asarray(rows, dtype=np.int64)
    current = current[current >= 0]
    while len(current) > FEW_ROWS:  # ends: each step keeps only rows not seen before
        current = current[~seen[current]]
        seen[current] = True
        current = parent[current]
        current = current[current >= 0]
    for node in current.tolist():
        while node >= 0 and not seen[node]:  # stops at a seen row: on a cycle too
            seen[node] = True
            node = int(parent[node])
    return np.flatnonzero(seen)


def nearest(parent: np.ndarray, rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """For each row: the nearest of itself and its ancestors where ``mask`` holds (-1 when none); one numpy step
    per tree level for all rows at once. Pass ``parent[rows]`` (where ≥ 0) for the nearest strict ancestor."""
    current = np.asarray(rows, dtype=np.int64).copy()
    found = np.full(len(current), -1, dtype=np.int64)
    active = np.flatnonzero(current >= 0)
    for _ in range(len(parent)):  # at most the tree's depth; bounded, should parents ever form a cycle
        if len(active) <= FEW_ROWS:
            break
        hit = mask[current[active]]
        found[active[hit]] = current[active[hit]]
        active = active[~hit]
        current[active] = parent[current[active]]
        active = active[current[active] >= 0]
    # The last few rows climb one by one: on a deep chain a Python step is far cheaper than a numpy step.
    for position in active.tolist():
        node = int(current[position])
        for _ in range(len(parent)):  # bounded, should parents ever form a cycle
            if node < 0 or mask[node]:
                break
            node = int(parent[node])
        found[position] = node if node >= 0 and mask[node] else -1
    return found
