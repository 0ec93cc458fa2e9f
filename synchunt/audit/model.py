"""The audit model: one cell per path × variant, each holding what the trace and the guard saw.

The model is computed once (``synchunt.audit.run``) and rendered by text, JSON and HTML renderers; its JSON
form is versioned (``schema``) so a saved audit can be re-rendered without running anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import msgspec

from synchunt.errors import UsageError
from synchunt.sites import SiteCount

SCHEMA = "synchunt.audit/1"
ROLES = ("bad", "fixed")


class Agreement(str, Enum):
    """Whether the trace and the guard tell the same story about one run (see ``synchunt.audit.agreement``)."""

    AGREE = "agree"  # the same rules, the same count per rule, the same functions per rule
    BLIND_SPOT = "blind-spot"  # they differ only in rules the trace cannot see in its detection mode
    DISAGREE = "disagree"  # any other difference; the cell's notes say which
    UNKNOWN = "unknown"  # a signal did not run (the cell has an error)


@dataclass(frozen=True)
class Signal:
    """What one signal (``trace`` or ``guard``) saw: counts, per-rule counts and call sites."""

    syncs: int
    confirmed: int
    latent: int
    rules: Mapping[str, int]
    sites: tuple[SiteCount, ...]
    mode: str  # trace: its detection mode; guard: "latent" on host tensors, "confirmed" where a device synced

    def functions(self, rule: str) -> set[str]:
        return {site.function or "?" for site in self.sites if site.rule == rule}

    def as_dict(self) -> dict[str, Any]:
        return {"syncs": self.syncs, "confirmed": self.confirmed, "latent": self.latent, "mode": self.mode,
                "rules": dict(sorted(self.rules.items())), "sites": [msgspec.structs.asdict(s) for s in self.sites]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Signal:
        return cls(syncs=int(data["syncs"]), confirmed=int(data["confirmed"]), latent=int(data["latent"]),
                   rules={str(k): int(v) for k, v in data["rules"].items()},
                   sites=tuple(SiteCount(**site) for site in data["sites"]), mode=str(data["mode"]))


@dataclass(frozen=True)
class Cell:
    """One path run in one variant under both signals, with the verdict.

    ``failure`` is set when the cell fails the audit: a ``fixed`` variant that syncs by either signal, a
    ``bad`` variant that shows no sync by both, or a run that raised (``error``). ``missing_rules`` /
    ``unexpected_rules`` compare the bad variant's rules (both signals together) with its registration; they
    are reported, not failed on.
    """

    path: str
    role: str
    variant: str
    trace: Signal | None
    guard: Signal | None
    agreement: Agreement
    notes: tuple[str, ...] = ()
    expected_rules: tuple[str, ...] = ()
    missing_rules: tuple[str, ...] = ()
    unexpected_rules: tuple[str, ...] = ()
    failure: str | None = None
    error: str | None = None
    trace_file: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.failure is None

    @property
    def rules(self) -> list[str]:
        """Every rule either signal saw, sorted."""
        seen: set[str] = set()
        for signal in (self.trace, self.guard):
            if signal is not None:
                seen.update(signal.rules)
        return sorted(seen)

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "role": self.role, "variant": self.variant, "passed": self.passed,
                "failure": self.failure, "error": self.error, "agreement": self.agreement.value,
                "notes": list(self.notes), "rules": self.rules, "expected_rules": list(self.expected_rules),
                "missing_rules": list(self.missing_rules), "unexpected_rules": list(self.unexpected_rules),
                "trace": self.trace.as_dict() if self.trace else None,
                "guard": self.guard.as_dict() if self.guard else None,
                "trace_file": self.trace_file, "seconds": self.seconds}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cell:
        return cls(path=data["path"], role=data["role"], variant=data["variant"],
                   trace=Signal.from_dict(data["trace"]) if data.get("trace") else None,
                   guard=Signal.from_dict(data["guard"]) if data.get("guard") else None,
                   agreement=Agreement(data["agreement"]), notes=tuple(data.get("notes", ())),
                   expected_rules=tuple(data.get("expected_rules", ())),
                   missing_rules=tuple(data.get("missing_rules", ())),
                   unexpected_rules=tuple(data.get("unexpected_rules", ())), failure=data.get("failure"),
                   error=data.get("error"), trace_file=data.get("trace_file"),
                   seconds=float(data.get("seconds", 0.0)))


@dataclass(frozen=True)
class AuditResult:
    """Every cell of one audit run, in registry order (bad before fixed)."""

    device: str
    trace_mode: str
    small: bool
    warmup: int
    iterations: int
    cells: tuple[Cell, ...]
    seconds: float = 0.0
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def failures(self) -> list[Cell]:
        return [cell for cell in self.cells if not cell.passed]

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def exit_code(self) -> int:
        """0 when every cell passes, 1 otherwise."""
        return 0 if self.passed else 1

    @property
    def paths(self) -> list[str]:
        return list(dict.fromkeys(cell.path for cell in self.cells))

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "device": self.device, "trace_mode": self.trace_mode, "small": self.small,
                "warmup": self.warmup, "iterations": self.iterations, "seconds": self.seconds,
                "passed": self.passed, "exit_code": self.exit_code, "meta": dict(self.meta),
                "summary": self.summary(), "cells": [cell.as_dict() for cell in self.cells]}

    def summary(self) -> dict[str, int]:
        """Counts for a one-line result: paths, runs, failures, agreement kinds."""
        counts = {"paths": len(self.paths), "runs": len(self.cells), "failed": len(self.failures)}
        for kind in Agreement:
            counts[kind.value] = sum(1 for cell in self.cells if cell.agreement is kind)
        return counts

    @classmethod
    def from_json(cls, data: Any) -> AuditResult:
        """Rebuild a saved audit (``to_json``) to render it again."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise UsageError(f"not a synchunt audit (expected schema {SCHEMA!r})")
        return cls(device=data["device"], trace_mode=data["trace_mode"], small=bool(data["small"]),
                   warmup=int(data["warmup"]), iterations=int(data["iterations"]),
                   cells=tuple(Cell.from_dict(cell) for cell in data["cells"]),
                   seconds=float(data.get("seconds", 0.0)), meta=dict(data.get("meta") or {}))
