"""Chain classes: two rows share a class exactly when their enclosing events have the same names and categories,
innermost first, and a class's links are that sequence — however the rows are asked for."""

from __future__ import annotations

import numpy as np
import pytest

from synchunt.detect.chains import ROOT, ChainClasses
from synchunt.trace.tree import ancestors, containment
from tests.trace.test_trace_tree import random_nesting


def _random_tree(seed: int, count: int = 1500) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ts, dur = random_nesting(rng, count, integer=True)
    parent, _ = containment(np.zeros(len(ts), dtype=np.int64), ts, dur, eps=0.0)
    names = np.array(["aten::a", "aten::b", "f.py(3): g", "step"], dtype=object)
    cats = np.array(["cpu_op", "python_function", "user_annotation"], dtype=object)
    # few distinct names: many rows share chains, some differ in one link only
    return (parent, rng.integers(0, len(names), len(ts)), names, rng.integers(0, len(cats), len(ts)), cats)


def _reference(parent, name_codes, names, cat_codes, cats, row) -> tuple[tuple[str, str], ...]:
    return tuple((str(names[name_codes[a]]), str(cats[cat_codes[a]])) for a in ancestors(parent, row))


def test_classes_are_equal_exactly_when_chains_are():
    for seed in range(4):
        parent, name_codes, names, cat_codes, cats = _random_tree(seed)
        classes = ChainClasses(parent, name_codes, names, cat_codes, cats)
        rng = np.random.default_rng(seed + 10)
        rows = rng.integers(0, len(parent), 400)
        got = classes.of(rows).tolist()
        chains = [_reference(parent, name_codes, names, cat_codes, cats, int(r)) for r in rows]
        by_chain: dict[tuple, int] = {}
        for cls, chain in zip(got, chains, strict=True):
            assert classes.links(cls) == chain
            assert by_chain.setdefault(chain, cls) == cls  # equal chains, one class
        assert len(set(by_chain.values())) == len(by_chain)  # distinct chains, distinct classes
        assert (ROOT in got) == (() in by_chain)
        assert len(set(got)) < len(got)  # the point: rows share classes


def test_classes_stay_the_same_across_calls_in_any_order():
    parent, name_codes, names, cat_codes, cats = _random_tree(7)
    rows = np.arange(len(parent))
    at_once = ChainClasses(parent, name_codes, names, cat_codes, cats)
    whole = at_once.of(rows)
    piecewise = ChainClasses(parent, name_codes, names, cat_codes, cats)
    backwards = rows[::-1]  # asked in pieces, deepest-numbered rows first
    pieces = np.concatenate([piecewise.of(backwards[k:k + 97]) for k in range(0, len(rows), 97)])[::-1]
    # class numbers depend on the order met, the partition they make does not
    pairs = set(zip(whole.tolist(), pieces.tolist(), strict=True))
    assert len(pairs) == len(set(whole.tolist())) == len(set(pieces.tolist()))
    assert all(at_once.links(a) == piecewise.links(b) for a, b in pairs)
    assert piecewise.of(np.zeros(0, dtype=np.int64)).tolist() == []


def test_roots_have_the_empty_chain():
    parent = np.array([-1, 0, 1, -1])
    classes = ChainClasses(parent, np.array([0, 1, 0, 1]), np.array(["x", "y"], dtype=object),
                           np.array([0, 0, 0, 0]), np.array(["cpu_op"], dtype=object))
    got = classes.of(np.array([0, 3, 1, 2])).tolist()
    assert got[0] == got[1] == ROOT and classes.links(ROOT) == ()
    assert classes.links(got[2]) == (("x", "cpu_op"),)
    assert classes.links(got[3]) == (("y", "cpu_op"), ("x", "cpu_op"))


def test_no_event_has_the_empty_chain_and_a_cycle_is_refused():
    names, cats = np.array(["x"], dtype=object), np.array(["cpu_op"], dtype=object)
    classes = ChainClasses(np.array([-1, 0]), np.zeros(2, np.int64), names, np.zeros(2, np.int64), cats)
    assert classes.of(np.array([-1, 1, -1])).tolist()[::2] == [ROOT, ROOT]  # -1: no row, not the last one
    looped = ChainClasses(np.array([1, 2, 0]), np.zeros(3, np.int64), names, np.zeros(3, np.int64), cats)
    with pytest.raises(ValueError, match="cycle"):
        looped.of(np.array([0]))


def test_a_deep_chain_costs_memory_in_proportion_to_its_depth():
    """One row under 20,000 nested events: its links are 20,000 pairs, not every suffix of the chain
    (20,000²/2 pairs, over a GB, as a memo of every enclosing class's links would hold)."""
    import tracemalloc

    depth = 20_000
    parent = np.arange(-1, depth - 1)  # event k encloses event k + 1
    names, cats = np.array(["aten::a", "aten::b"], dtype=object), np.array(["cpu_op"], dtype=object)
    classes = ChainClasses(parent, np.arange(depth) % 2, names, np.zeros(depth, np.int64), cats)
    tracemalloc.start()
    try:
        links = classes.links(int(classes.of(np.array([depth - 1]))[0]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(links) == depth - 1 and links[0] == ("aten::a", "cpu_op") and links[-1] == ("aten::a", "cpu_op")
    assert peak < 64 << 20, f"{peak / 2**20:.0f} MB for one chain {depth} deep"
