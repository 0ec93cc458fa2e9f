"""Renderers over the analysis model: terminal text, JSON, CSV, HTML."""

from synchunt.attribute.verdict import format_us, verdict
from synchunt.report.tabular import render_csv, render_json
from synchunt.report.text import render_text

__all__ = ["format_us", "render_csv", "render_json", "render_text", "verdict"]
