"""Text, JSON and HTML renderings of one audit, and the JSON round trip."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from synchunt.audit import SCHEMA, AuditResult, run_audit
from synchunt.capture.workload import Workload
from synchunt.errors import UsageError
from synchunt.render.audit.html import audit_page_data, render_audit_html
from synchunt.render.audit.json import render_json
from synchunt.render.audit.text import render_text

SIGNAL = {"type": "object", "required": ["syncs", "confirmed", "latent", "mode", "rules", "sites"],
          "properties": {"syncs": {"type": "integer"}, "rules": {"type": "object",
                                                                 "additionalProperties": {"type": "integer"}},
                         "sites": {"type": "array", "items": {
                             "type": "object", "required": ["rule", "op", "file", "line", "function", "count"]}}}}
AUDIT_SHAPE = {
    "type": "object",
    "required": ["schema", "device", "trace_mode", "small", "warmup", "iterations", "passed", "exit_code",
                 "summary", "cells"],
    "properties": {
        "schema": {"const": SCHEMA},
        "exit_code": {"enum": [0, 1]},
        "summary": {"type": "object", "required": ["paths", "runs", "failed", "agree", "blind-spot", "disagree",
                                                   "unknown"]},
        "cells": {"type": "array", "items": {
            "type": "object",
            "required": ["path", "role", "variant", "passed", "failure", "error", "agreement", "notes", "rules",
                         "expected_rules", "missing_rules", "unexpected_rules", "trace", "guard"],
            "properties": {"role": {"enum": ["bad", "fixed"]},
                           "agreement": {"enum": ["agree", "blind-spot", "disagree", "unknown"]},
                           "trace": {"oneOf": [{"type": "null"}, SIGNAL]},
                           "guard": {"oneOf": [{"type": "null"}, SIGNAL]}}}},
    },
}


@pytest.fixture
def mixed(toys: dict[str, Workload]) -> AuditResult:
    """A failing audit with every kind of cell: agreeing, failing, mismatched, crashed."""
    return run_audit(["honest", "leaky-fixed", "wrong-expectation", "crashing"], registry=toys)


def test_audit_json_has_the_documented_shape(mixed: AuditResult) -> None:
    data = json.loads(render_json(mixed))
    jsonschema.validate(data, AUDIT_SHAPE)
    assert data["exit_code"] == 1 and data["summary"]["failed"] == 3 and data["summary"]["runs"] == 8
    honest_bad = data["cells"][0]
    assert honest_bad["trace"]["rules"] == {"SH101": 1} and honest_bad["guard"]["rules"] == {"SH101": 1}
    assert honest_bad["guard"]["sites"][0]["function"] == "_even_by_mask"


def test_audit_json_round_trip_renders_the_same_text(mixed: AuditResult) -> None:
    again = AuditResult.from_json(json.loads(render_json(mixed)))
    assert again.to_json() == mixed.to_json()
    assert render_text(again) == render_text(mixed)
    with pytest.raises(UsageError, match="not a synchunt audit"):
        AuditResult.from_json({"schema": "synchunt.analysis/1"})


def test_audit_text_matrix_rows_notes_and_verdict(mixed: AuditResult) -> None:
    text = render_text(mixed)
    rows = {tuple(line.split()[:2]): line for line in text.splitlines() if line.startswith(("honest", "leaky"))}
    assert re.search(r"\b1\s+1\s+yes\s+SH101\s+trace\s+SH101 _even_by_mask ×1\s+ok$", rows["honest", "bad"])
    assert re.search(r"\b0\s+0\s+yes\s+-\s+-\s+ok$", rows["honest", "fixed"])
    assert rows["leaky-fixed", "fixed"].endswith("FAIL")
    assert "wrong-expectation bad: expected SH105 from the registration, seen by neither signal" in text
    assert "crashing bad: error: RuntimeError: toy path failed on purpose" in text
    assert "FAIL — 3 of 8 runs:\n  - leaky-fixed fixed: the fixed variant syncs (trace ×1, guard ×1)" in text


def test_audit_html_embeds_the_audit_through_the_escaping_serializer(toys: dict[str, Workload]) -> None:
    hostile_name = "</script><img src=x onerror=alert(1)>"
    registry = {hostile_name: dataclasses.replace(toys["honest"], name=hostile_name)}
    result = run_audit(registry=registry)
    page = render_audit_html(result)
    assert hostile_name not in page and "<img" not in page
    island = re.search(r'<script type="application/json" id="synchunt-data">(.*?)</script>', page, re.S)
    assert island is not None
    data = json.loads(island[1])
    assert data == json.loads(json.dumps(audit_page_data(result)))
    assert data["rows"][0]["path"] == hostile_name and data["audit"]["cells"][0]["path"] == hostile_name
    assert not re.search(r"@[A-Z]+@", page)  # every placeholder of the shared page shell was filled
    # Offline: no resource is fetched from anywhere.
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert html.unescape(page.split("<title>")[1].split("</title>")[0]) == "synchunt audit"


def test_audit_html_draws_the_matrix_in_a_browser(mixed: AuditResult, tmp_path: Path) -> None:
    chromium = next((p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))), None)
    if chromium is None:
        pytest.skip("no Chromium on PATH")
    page = tmp_path / "audit.html"
    page.write_text(render_audit_html(mixed), encoding="utf-8")
    done = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path}/p",
                           "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60)
    dom = done.stdout
    assert 'data-rendered="ok"' in dom, done.stderr[-2000:]
    matrix = dom.split('<table id="matrix">')[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", matrix, re.S)  # a note in a title attribute may hold a newline
    assert len(rows) == 1 + len(mixed.cells)  # the header row and one row per cell
    assert rows[1].startswith('<td class="site">honest</td><td>bad</td><td class="num">1</td>')
    assert rows[4].endswith('<td class="new">FAIL</td>')  # leaky-fixed, fixed
    assert "FAIL — 3 of 8 runs:" in dom
