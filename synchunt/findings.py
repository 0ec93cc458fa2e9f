"""Findings: a rule code at a source location, the one model the lint and the gate produce and every finding
format (text, JSON, SARIF, GitHub, JUnit) renders."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Literal

import msgspec


class Severity(str, Enum):
    """How much a finding matters; the names are SARIF's result levels."""

    NOTE = "note"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


class Confidence(str, Enum):
    """How sure the producer is that the finding is real (e.g. that a tensor lives on the device)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return _CONFIDENCE_RANK[self]

    def at_least(self, other: Confidence) -> bool:
        return self.rank >= other.rank


_SEVERITY_RANK = {Severity.NOTE: 0, Severity.WARNING: 1, Severity.ERROR: 2}
_CONFIDENCE_RANK = {Confidence.LOW: 0, Confidence.MEDIUM: 1, Confidence.HIGH: 2}


class Edit(msgspec.Struct, frozen=True):
    """One change to a file: the text from (``line``, ``column``) up to (``end_line``, ``end_column``) becomes
    ``text``. Lines and columns are 1-based characters, the end exclusive; an empty span inserts."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


Safety = Literal["safe", "conditional"]


class Rewrite(msgspec.Struct, frozen=True, kw_only=True):
    """A fix tailored to one line: the user's own expression rewritten with the user's own names.

    ``original`` is the text of the span (``line``…``end_column``) that syncs and ``replacement`` what takes its
    place; ``edits`` are what ``synchunt lint --fix`` writes (the replacement, plus a line it adds, such as a read
    hoisted above a loop). ``condition`` is the one line under which the rewrite is equivalent (``None``: it always
    is; ``safety`` is then ``"safe"``, else ``"conditional"``). ``checked`` says whether the original and the
    rewrite gave equal results on generated inputs that satisfy the condition, with no sync in the rewrite;
    ``check`` says how, or why it was not checked. ``pattern`` names the rewrite (``synchunt.fixes.PATTERNS``).
    """

    rule: str
    pattern: str
    title: str
    line: int
    column: int
    end_line: int
    end_column: int
    original: str
    replacement: str
    edits: tuple[Edit, ...]
    condition: str | None = None
    safety: Safety = "safe"
    checked: bool = False
    check: str = "not checked"

    def to_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)  # type: ignore[no-any-return]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rewrite:
        return msgspec.convert(data, cls)


@dataclass(frozen=True)
class Finding:
    """One finding. Lines and columns are 1-based; ``end_column`` is exclusive (the column after the last
    character, as in SARIF); ``end_line``/``end_column`` are ``None`` when unknown. ``code`` is a catalogue
    rule code, except for problems that kept the producer from analysing a file (``is_problem``), whose
    code is outside the catalogue.
    ``scope`` is the enclosing function's qualified name; ``snippet`` the first source line, stripped.
    ``fix`` is the rewrite tailored to this finding's own line (``synchunt.fixes``), when one exists.
    ``context`` (the lint's) says where the line runs: ``"step"`` (per step or request), ``"cold"`` (init,
    weight loading, capture, error paths, tests) or ``"unknown"``.
    """

    code: str
    message: str
    path: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None
    severity: Severity = Severity.WARNING
    confidence: Confidence = Confidence.HIGH
    scope: str | None = None
    snippet: str | None = None
    is_problem: bool = False
    fix: Rewrite | None = None
    context: str | None = None  # the lint's: "step", "cold" or "unknown" (synchunt.lint.context)

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.value
        data["confidence"] = self.confidence.value
        data["fix"] = self.fix.to_dict() if self.fix is not None else None
        if self.context is None:
            del data["context"]  # findings of other producers (the gate) carry none
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        fields = dict(data)
        fields["severity"] = Severity(fields["severity"])
        fields["confidence"] = Confidence(fields["confidence"])
        if fields.get("fix") is not None:
            fields["fix"] = Rewrite.from_dict(fields["fix"])
        return cls(**fields)


@dataclass(frozen=True)
class FindingSet:
    """What a finding renderer takes: the findings, the producing tool, how many files were checked (the lint),
    the rules a SARIF log describes, and notes on what was left out."""

    findings: tuple[Finding, ...]
    tool: str = "synchunt"
    files_checked: int | None = None
    rule_codes: tuple[str, ...] | None = None  # None: every catalogue rule
    notes: tuple[str, ...] = ()  # what was left out and why (test files skipped, findings in a baseline)
