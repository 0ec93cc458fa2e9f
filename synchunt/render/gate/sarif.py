"""The gate result as a SARIF 2.1.0 log."""

from __future__ import annotations

from synchunt.gate.evaluate import GateResult
from synchunt.render.gate.findings import gate_findings
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.sarif import render_sarif as sarif_log


def render_sarif(result: GateResult, options: RenderOptions | None = None) -> str:
    from synchunt import __version__

    return sarif_log(gate_findings(result), tool_version=__version__, execution_successful=result.judged)


RENDERER = Renderer("sarif", ".sarif", "a SARIF 2.1.0 log for code scanning", render_sarif)
