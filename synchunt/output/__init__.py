"""Machine-readable finding formats shared by the lint and the CI gate: one ``Finding`` model, one renderer
module per format (text, json, sarif, github)."""

from __future__ import annotations

from synchunt.output.finding import Confidence, Finding, Severity

__all__ = ["Confidence", "Finding", "Severity"]
