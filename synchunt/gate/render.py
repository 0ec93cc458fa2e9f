"""The machine-readable gate formats, one function from a gate result to text (the terminal text is a rich
renderable, see ``synchunt.gate.text``)."""

from __future__ import annotations

from synchunt.gate.evaluate import GateResult
from synchunt.gate.findings import gate_findings
from synchunt.gate.junit import render_gate_junit

DOCUMENT_FORMATS = ("github", "sarif", "junit")


def render_gate_document(result: GateResult, output_format: str) -> str:
    """``github`` workflow commands, a ``sarif`` 2.1.0 log or ``junit`` XML."""
    if output_format == "github":
        from synchunt.output.github import render_github

        return render_github(gate_findings(result))
    if output_format == "sarif":
        from synchunt import __version__
        from synchunt.output.sarif import render_sarif

        return render_sarif(gate_findings(result), tool_version=__version__)
    if output_format == "junit":
        return render_gate_junit(result)
    raise ValueError(f"unknown gate format {output_format!r}; expected one of {', '.join(DOCUMENT_FORMATS)}")
