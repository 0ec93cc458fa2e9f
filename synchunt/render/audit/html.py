"""The audit matrix as one self-contained HTML page, on the stall report's page shell and stylesheet.

The page reuses the report's template (``assets/page.html``: content security policy, data island) and
``page.css``; the data goes in only through :func:`script_json`, and the page's script puts text into the DOM
with ``textContent``. The matrix needs no figure, so no plotly.js is inlined.
"""

from __future__ import annotations

from typing import Any

from synchunt.audit.model import AuditResult
from synchunt.render.audit.text import (
    AGREEMENT_MARKS,
    LEGEND,
    cell_name,
    cell_notes,
    rules_label,
    site_lines,
    variant_label,
    verdict_line,
)
from synchunt.render.registry import Renderer, RenderOptions


def render_audit_html(result: AuditResult, options: RenderOptions | None = None) -> str:
    """The audit as an HTML document with no external resources."""
    from synchunt.render.html.page import asset, fill_shell  # plotly and pandas load only for an HTML page

    return fill_shell("synchunt audit", audit_page_data(result), asset("audit.js"))


RENDERER = Renderer("html", ".html", "the matrix as a self-contained HTML page", render_audit_html)


def audit_page_data(result: AuditResult) -> dict[str, Any]:
    """What the page script draws: the rows as the text renderer words them, plus the audit's JSON form."""
    from synchunt.render.html.page import page_version

    rows = [{"path": cell.path, "variant": variant_label(cell), "role": cell.role,
             "trace": cell.trace.syncs if cell.trace else None, "guard": cell.guard.syncs if cell.guard else None,
             "agreement": cell.agreement.value, "agree": AGREEMENT_MARKS[cell.agreement],
             "rules": rules_label(cell), "sites": site_lines(cell), "passed": cell.passed,
             "notes": cell_notes(cell)} for cell in result.cells]
    scale = "small presets" if result.small else "full size"
    return {"title": f"synchunt audit: {len(result.paths)} paths on {result.device}",
            "subtitle": f"trace mode {result.trace_mode} · {scale} · {len(result.cells)} runs",
            "version": page_version(), "verdict": verdict_line(result), "legend": LEGEND, "rows": rows,
            "notes": [[cell_name(cell), note] for cell in result.cells for note in cell_notes(cell)],
            "audit": result.to_json()}


__all__ = ["audit_page_data", "render_audit_html"]
