"""The columns of a trace that detection reads, as plain arrays (built once per trace)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synchunt.trace import Trace, vocab
from synchunt.trace.tree import ancestors


@dataclass(frozen=True)
class Columns:
    names: np.ndarray  # object array of str
    cats: np.ndarray  # object array of str
    parent: np.ndarray
    correlation: np.ndarray
    ts: np.ndarray
    dur: np.ndarray
    pid: np.ndarray
    tid: np.ndarray

    @classmethod
    def of(cls, trace: Trace) -> Columns:
        return cls(names=trace.strings("name"), cats=trace.strings("cat"), parent=trace.column("parent"),
                   correlation=trace.column("correlation"), ts=trace.column("ts"), dur=trace.column("dur"),
                   pid=trace.column("pid"), tid=trace.column("tid"))

    def chain(self, index: int) -> list[int]:
        """The event's enclosing host events, innermost first."""
        return ancestors(self.parent, index)

    def op_names(self, chain: list[int]) -> list[str]:
        """Names of the ``cpu_op`` events in ``chain`` (innermost first)."""
        return [self.names[a] for a in chain if self.cats[a] == vocab.CPU_OP]

    def activity_by_correlation(self, category: str) -> dict[int, str]:
        """Correlation id → the name of the device activity of ``category`` it launched."""
        mask = self.cats == category
        return {int(c): str(n) for c, n in zip(self.correlation[mask], self.names[mask], strict=True) if c >= 0}

    @staticmethod
    def plain(value: object) -> int | str:
        """A numpy scalar id as a Python int (or the string id as it is)."""
        return value.item() if hasattr(value, "item") else value  # type: ignore[return-value]
