"""`synchunt report` and `synchunt compare` from the command line, and the escaping of hostile trace text."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from report_support import (
    HOSTILE_FUNCTION,
    HOSTILE_LABEL,
    HOSTILE_OP,
    HOSTILE_SCOPE,
    HOSTILE_THREAD,
    data_island,
    html_report,
)
from typer.testing import CliRunner

from synchunt.attribute import analyze
from synchunt.cli import app
from synchunt.cli.report import default_report_path
from synchunt.errors import UsageError
from synchunt.render.html.escape import plotly_text, script_json

runner = CliRunner()


def test_report_cli_writes_next_to_the_trace_and_never_replaces(masked_small: Path, tmp_path: Path) -> None:
    trace = tmp_path / masked_small.name
    shutil.copy(masked_small, trace)
    first = runner.invoke(app, ["report", str(trace)])
    assert first.exit_code == 0, first.output
    html = default_report_path(trace)
    assert html.name.endswith(".html") and ".pt.trace" not in html.name and html.exists()
    html.write_text("mine")
    again = runner.invoke(app, ["report", str(trace)])  # the default name is taken: a new one, never a replace
    assert again.exit_code == 0, again.output
    assert html.read_text() == "mine"
    assert "synchunt-data" in html.with_name(f"{html.stem}-2.html").read_text()
    named = runner.invoke(app, ["report", str(trace), "-o", str(html)])
    assert isinstance(named.exception, UsageError) and "exists; pass --force" in str(named.exception)
    assert html.read_text() == "mine"
    forced = runner.invoke(app, ["report", str(trace), "-o", str(html), "--force"])
    assert forced.exit_code == 0 and "synchunt-data" in html.read_text()
    onto_input = runner.invoke(app, ["report", str(trace), "-o", str(trace), "--force"])
    assert isinstance(onto_input.exception, UsageError) and "one of the inputs" in str(onto_input.exception)


def test_report_cli_compare_page(masked_small: Path, sliced_small: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(masked_small), "--compare", str(sliced_small), "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = data_island(out.read_text())
    assert [side["key"] for side in data["sides"]] == ["before", "after"]
    assert data["comparison"]["headline"].startswith("8 → 0 syncs")
    assert data["sides"][1]["model"]["header"]["verdict"] == "sync-free"


def test_report_cli_thread_filter(masked_small: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(masked_small), "--thread", "scheduler", "-o", str(out)])
    assert result.exit_code == 0, result.output
    header = data_island(out.read_text())["sides"][0]["model"]["header"]
    assert header["verdict"] == "8 latent syncs on thread scheduler" and header["filters"]["thread"] == "scheduler"
    missing = runner.invoke(app, ["report", str(masked_small), "--thread", "no-such-thread", "-o",
                                  str(tmp_path / "other.html")])
    assert isinstance(missing.exception, UsageError) and "no thread 'no-such-thread'" in str(missing.exception)


def test_report_cli_bad_output(masked_small: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(masked_small), "-o", str(tmp_path)])
    assert isinstance(result.exception, UsageError) and "folder" in str(result.exception)


def test_report_cli_compare_text_and_json(masked_small: Path, sliced_small: Path) -> None:
    text = runner.invoke(app, ["compare", str(masked_small), str(sliced_small)])
    assert text.exit_code == 0, text.output
    assert "8 → 0 syncs" in text.output and "aten::nonzero gone" in text.output
    as_json = runner.invoke(app, ["compare", str(masked_small), str(sliced_small), "--format", "json"])
    data = json.loads(as_json.output)
    assert data["schema"] == "synchunt.comparison/2" and data["ops_gone"] == ["aten::nonzero"]
    assert (data["before"]["syncs"], data["after"]["syncs"]) == (8, 0)


def test_report_escape_helpers() -> None:
    value = {"name": "</script><script>alert(1)</script>&\u2028\u2029"}
    text = script_json(value)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == value
    assert plotly_text('<br><b>"x"&') == '&lt;br&gt;&lt;b&gt;"x"&amp;'


def test_report_hostile_names_stay_data(hostile_trace: Path) -> None:
    result = analyze(hostile_trace)
    assert HOSTILE_THREAD in set(result.syncs["thread"])  # the names really reach the analysis
    page = html_report(result)
    # Only the page's own three script elements; no trace text outside the escaped data island.
    assert len(re.findall(r"<script\b", page.replace(_plotly_js(), ""))) == 3
    outside = page.replace(_plotly_js(), "")
    for hostile in (HOSTILE_THREAD, HOSTILE_SCOPE, HOSTILE_FUNCTION, HOSTILE_OP, HOSTILE_LABEL):
        assert hostile not in outside
    data = json.dumps(data_island(page), ensure_ascii=False)
    assert json.dumps(HOSTILE_THREAD, ensure_ascii=False)[1:-1] in data


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()
