"""The columns of a trace that detection reads, as plain arrays (built once per trace).

Masks over categories and names compare codes (one test per distinct name, not per event); ``names`` and
``cats`` are the per-row strings for the few rows a rule looks at closely.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

import msgspec
import numpy as np

from synchunt.detect.chains import ChainClasses
from synchunt.trace import Trace, vocab
from synchunt.trace.table import RowStrings, value_mask
from synchunt.trace.tree import ancestors, nearest, parents


class Columns(msgspec.Struct, frozen=True, dict=True):
    names: RowStrings  # each row's name as str, looked up on access
    cats: RowStrings
    parent: np.ndarray
    correlation: np.ndarray
    ts: np.ndarray
    dur: np.ndarray
    name_codes: np.ndarray
    name_vocabulary: np.ndarray
    cat_codes: np.ndarray
    cat_vocabulary: np.ndarray
    pid_codes: np.ndarray  # each row's pid as a code into pid_values
    pid_values: list[Any]
    tid_codes: np.ndarray  # each row's tid as a code into tid_values
    tid_values: list[Any]

    @classmethod
    def of(cls, trace: Trace) -> Columns:
        name, cat = trace.table.coded("name"), trace.table.coded("cat")
        pid_codes, pid_values = trace.table.id_codes("pid")
        tid_codes, tid_values = trace.table.id_codes("tid")
        return cls(names=name.row_strings(), cats=cat.row_strings(), parent=trace.column("parent"),
                   correlation=trace.column("correlation"), ts=trace.column("ts"), dur=trace.column("dur"),
                   name_codes=name.codes, name_vocabulary=name.vocabulary, cat_codes=cat.codes,
                   cat_vocabulary=cat.vocabulary, pid_codes=pid_codes, pid_values=pid_values, tid_codes=tid_codes,
                   tid_values=tid_values)

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

    @cached_property
    def classes(self) -> ChainClasses:
        """The enclosing chains of rows by class (see `synchunt.detect.chains`)."""
        return ChainClasses(self.parent, self.name_codes, self.name_vocabulary, self.cat_codes, self.cat_vocabulary)

    def nearest(self, rows: np.ndarray, mask: np.ndarray, strict: bool = False) -> np.ndarray:
        """For each row, the nearest of itself (unless ``strict``) and its enclosing events where ``mask`` holds;
        -1 where none does."""
        return nearest(self.parent, parents(self.parent, rows) if strict else rows, mask)

    def op_names(self, chain: list[int]) -> list[str]:
        """Names of the ``cpu_op`` events in ``chain`` (innermost first)."""
        return [self.names[a] for a in chain if self.cats[a] == vocab.CPU_OP]

    def activity_by_correlation(self, category: str) -> dict[int, str]:
        """Correlation id → the name of the device activity of ``category`` it launched."""
        mask = self.in_categories((category,))
        return {int(c): str(n) for c, n in zip(self.correlation[mask], self.names[mask], strict=True) if c >= 0}

    def ids(self, rows: list[int]) -> list[tuple[int | str, int | str]]:
        """(pid, tid) of each row as Python values (ids are read through their codes: no per-row id array)."""
        pids, tids = self.pid_values, self.tid_values
        return [(pids[p], tids[t]) for p, t in zip(self.pid_codes[rows].tolist(), self.tid_codes[rows].tolist(),
                                                    strict=True)]
