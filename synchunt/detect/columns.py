"""The columns of a trace that detection reads, as plain arrays (built once per trace).

Masks over categories and names compare codes (one test per distinct name, not per event); ``names`` and
``cats`` are the per-row strings for the few rows a rule looks at closely.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from synchunt.trace import Trace, vocab
from synchunt.trace.table import RowStrings, value_mask
from synchunt.trace.tree import ancestor_lists, ancestors


@dataclass(frozen=True)
class Columns:
    names: RowStrings  # each row's name as str, looked up on access
    cats: RowStrings
    parent: np.ndarray
    correlation: np.ndarray
    ts: np.ndarray
    dur: np.ndarray
    pid: np.ndarray
    tid: np.ndarray
    name_codes: np.ndarray
    name_vocabulary: np.ndarray
    cat_codes: np.ndarray
    cat_vocabulary: np.ndarray
    tid_codes: np.ndarray  # each row's tid as a code into tid_values
    tid_values: list[Any]

    @classmethod
    def of(cls, trace: Trace) -> Columns:
        name, cat = trace.table.coded("name"), trace.table.coded("cat")
        tid_codes, tid_values = trace.table.id_codes("tid")
        return cls(names=name.row_strings(), cats=cat.row_strings(), parent=trace.column("parent"),
                   correlation=trace.column("correlation"), ts=trace.column("ts"), dur=trace.column("dur"),
                   pid=trace.column("pid"), tid=trace.column("tid"), name_codes=name.codes,
                   name_vocabulary=name.vocabulary, cat_codes=cat.codes, cat_vocabulary=cat.vocabulary,
                   tid_codes=tid_codes, tid_values=tid_values)

    def in_categories(self, categories: Iterable[str]) -> np.ndarray:
        """Rows whose category is one of ``categories`` (a boolean mask)."""
        wanted = set(categories)
        return value_mask(self.cat_codes, (str(c) in wanted for c in self.cat_vocabulary.tolist()))

    def named(self, test: Callable[[str], bool]) -> np.ndarray:
        """Rows whose name passes ``test`` (asked once per distinct name)."""
        return value_mask(self.name_codes, (test(str(n)) for n in self.name_vocabulary.tolist()))

    def chain(self, index: int) -> list[int]:
        """The event's enclosing host events, innermost first."""
        return ancestors(self.parent, index)

    def chains(self, rows: Iterable[int] | np.ndarray) -> list[list[int]]:
        """`chain` of every row at once."""
        return ancestor_lists(self.parent, rows if isinstance(rows, np.ndarray) else list(rows))

    def along(self, chains: list[list[int]]) -> list[list[tuple[str, str]]]:
        """(name, category) of the events of each chain, gathered for every chain at once."""
        rows = np.fromiter(itertools.chain.from_iterable(chains), np.int64)
        names = self.name_vocabulary[self.name_codes[rows]].tolist()
        cats = self.cat_vocabulary[self.cat_codes[rows]].tolist()
        out = []
        start = 0
        for links in chains:
            end = start + len(links)
            out.append(list(zip(names[start:end], cats[start:end], strict=True)))
            start = end
        return out

    def op_names(self, chain: list[int]) -> list[str]:
        """Names of the ``cpu_op`` events in ``chain`` (innermost first)."""
        return [self.names[a] for a in chain if self.cats[a] == vocab.CPU_OP]

    def activity_by_correlation(self, category: str) -> dict[int, str]:
        """Correlation id → the name of the device activity of ``category`` it launched."""
        mask = self.in_categories((category,))
        return {int(c): str(n) for c, n in zip(self.correlation[mask], self.names[mask], strict=True) if c >= 0}

    @staticmethod
    def plain(value: object) -> int | str:
        """A numpy scalar id as a Python int (or the string id as it is)."""
        return value.item() if hasattr(value, "item") else value  # type: ignore[return-value]
