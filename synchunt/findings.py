"""Findings: a rule code at a source location, the one model the lint and the gate produce and every finding
format (text, JSON, SARIF, GitHub, JUnit) renders."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any


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


@dataclass(frozen=True)
class Finding:
    """One finding. Lines and columns are 1-based; ``end_column`` is exclusive (the column after the last
    character, as in SARIF); ``end_line``/``end_column`` are ``None`` when unknown. ``code`` is a catalogue
    rule code, except for problems that kept the producer from analysing a file (``is_problem``), whose
    code is outside the catalogue.
    ``scope`` is the enclosing function's qualified name; ``snippet`` the first source line, stripped.
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

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.value
        data["confidence"] = self.confidence.value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        fields = dict(data)
        fields["severity"] = Severity(fields["severity"])
        fields["confidence"] = Confidence(fields["confidence"])
        return cls(**fields)


@dataclass(frozen=True)
class FindingSet:
    """What a finding renderer takes: the findings, the producing tool, how many files were checked (the lint),
    and the rules a SARIF log describes."""

    findings: tuple[Finding, ...]
    tool: str = "synchunt"
    files_checked: int | None = None
    rule_codes: tuple[str, ...] | None = None  # None: every catalogue rule
