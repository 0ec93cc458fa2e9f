"""One page: ``synchunt analyze --format html``, ``synchunt report`` and the registry render the same report."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from synchunt.cli import app
from synchunt.render.analysis import ANALYSIS_FORMATS
from synchunt.render.report import REPORT_FORMATS

runner = CliRunner()
NONCE = re.compile(r"nonce(=\"|-)[A-Za-z0-9_-]+")


def _page(path: Path) -> str:
    return NONCE.sub("nonce", path.read_text(encoding="utf-8"))


def test_analyze_html_and_report_write_one_page(masked_small: Path, tmp_path: Path) -> None:
    analyzed, reported = tmp_path / "analyze.html", tmp_path / "report.html"
    first = runner.invoke(app, ["analyze", str(masked_small), "--format", "html", "--output", str(analyzed)])
    second = runner.invoke(app, ["report", str(masked_small), "--output", str(reported)])
    assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
    page = _page(analyzed)
    assert page == _page(reported)
    assert '"timelines": [{' in page or '"timelines":[{' in page  # the traces' timelines, in both


def test_the_analysis_html_format_is_the_reports_renderer() -> None:
    assert REPORT_FORMATS.names() == ["html"]
    assert ANALYSIS_FORMATS.get("html").extension == REPORT_FORMATS.get("html").extension == ".html"
