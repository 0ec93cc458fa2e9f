"""Enclosing chains by class: rows whose enclosing host events have the same names and categories (innermost
first) share one class, so what depends only on those names (a rule's verdict, a call site, the scopes) is worked
out once per class instead of once per row, and no per-row list of the chain is built."""

from __future__ import annotations

import numpy as np

from synchunt.trace.tree import ancestor_rows, parents

ROOT = 0  # the class of an empty chain: a row that no host event encloses


class ChainClasses:
    """Classes of the chains over one trace's containment tree (``parent``), named through its name and category
    codes. Classes are interned as they are met: ask `of` for many rows at once."""

    def __init__(self, parent: np.ndarray, name_codes: np.ndarray, name_vocabulary: np.ndarray,
                 cat_codes: np.ndarray, cat_vocabulary: np.ndarray) -> None:
        self._parent = parent
        self._name_codes, self._name_vocabulary = name_codes, name_vocabulary
        self._cat_codes, self._cat_vocabulary = cat_codes, cat_vocabulary
        self._of_node: dict[int, int] = {-1: ROOT}  # event row → the class of the chain that starts at it
        self._keys: list[tuple[int, int, int]] = [(-1, -1, ROOT)]  # class → (name code, cat code, enclosing class)
        self._number: dict[tuple[int, int, int], int] = {}
        self._links: dict[int, tuple[tuple[str, str], ...]] = {ROOT: ()}
        self._pairs: dict[tuple[int, int], tuple[str, str]] = {}

    def of(self, rows: np.ndarray) -> np.ndarray:
        """The class of each row's enclosing chain (its strict ancestors), `ROOT` when nothing encloses it (or
        for a row of -1, no event)."""
        start = parents(self._parent, rows)
        self._classify(ancestor_rows(self._parent, start))
        of_node = self._of_node
        return np.fromiter((of_node[node] for node in start.tolist()), dtype=np.int64, count=len(start))

    def links(self, number: int) -> tuple[tuple[str, str], ...]:
        """(name, category) of the chain's events, innermost first (kept for the classes asked for only: keeping
        every suffix of a chain 50,000 events deep would hold 50,000²/2 pairs)."""
        found = self._links.get(number)
        if found is None:
            pairs = []
            cls = number
            while cls != ROOT:
                name, cat, cls = self._keys[cls]
                pair = self._pairs.get((name, cat))
                if pair is None:  # one tuple per distinct (name, category), shared by every chain that has it
                    pair = self._pairs[name, cat] = (str(self._name_vocabulary[name]), str(self._cat_vocabulary[cat]))
                pairs.append(pair)
            found = self._links[number] = tuple(pairs)
        return found

    def _classify(self, nodes: np.ndarray) -> None:
        """Give each node the class of its chain: the class of (its name, its category, its parent's class)."""
        of_node, keys, number = self._of_node, self._keys, self._number
        fresh = [node not in of_node for node in nodes.tolist()]
        nodes = nodes[np.fromiter(fresh, dtype=bool, count=len(fresh))]
        listed = nodes.tolist()
        up = dict(zip(listed, self._parent[nodes].tolist(), strict=True))
        codes = dict(zip(listed, zip(self._name_codes[nodes].tolist(), self._cat_codes[nodes].tolist(),
                                     strict=True), strict=True))
        for node in listed:
            path = []
            while node not in of_node:
                path.append(node)
                node = up[node]
                if len(path) > len(up):  # a tree never climbs past every node it has
                    raise ValueError("the containment tree has a cycle")
            cls = of_node[node]
            for member in reversed(path):
                key = (*codes[member], cls)
                cls = number.get(key, -1)
                if cls < 0:
                    cls = number[key] = len(keys)
                    keys.append(key)
                of_node[member] = cls
