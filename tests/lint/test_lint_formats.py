"""Every output format over one shared set of findings."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from synchunt.findings import Confidence, Finding, FindingSet, Severity
from synchunt.lint import lint_paths
from synchunt.render.findings.json import SCHEMA, load_json, render_json
from synchunt.render.findings.text import render_text
from synchunt.render.github import render_github
from synchunt.render.registry import RenderOptions
from synchunt.render.sarif import rule_help_markdown, to_sarif
from synchunt.rules import RULES, get_rule

SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

FINDINGS = [
    Finding("SH101", "`idx[idx % n == r]` indexes with a boolean mask (inside a loop)", "pkg/pool.py", 12, 16,
            12, 39, Severity.ERROR, Confidence.HIGH, "HostPool.load", "local = idx[idx % n == r] // n"),
    Finding("SH201", "`free.cpu()` copies, 100% blocking: a, b", "pkg/alloc.py", 3, 5, 4, 2, Severity.WARNING,
            Confidence.MEDIUM, None, None),
    Finding("SH109", "`x.item()` reads a device value", "/abs/path/m.py", 7, 1, None, None, Severity.NOTE,
            Confidence.LOW),
    Finding("parse-error", "cannot parse as Python: invalid syntax", "pkg/broken.py", 1, 5, severity=Severity.ERROR,
            is_problem=True),
]


def test_sarif_is_valid_against_the_official_schema():
    document = to_sarif(FINDINGS, tool_version="0.1.0")
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(document)
    json.dumps(document)  # serializable as is


def test_sarif_rules_and_results():
    document = to_sarif(FINDINGS)
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [rule.code for rule in RULES]
    sh101 = rules[[rule["id"] for rule in rules].index("SH101")]
    catalogue = get_rule("SH101")
    assert sh101["fullDescription"]["text"] == catalogue.what_it_does
    assert catalogue.why_bad in sh101["help"]["text"] and catalogue.use_instead in sh101["help"]["markdown"]
    assert sh101["helpUri"].startswith("https://")
    results = run["results"]
    assert [result["ruleId"] for result in results] == ["SH109", "SH201", "SH101"]  # sorted by path
    first = results[2]
    assert rules[first["ruleIndex"]]["id"] == "SH101"
    assert first["level"] == "error" and first["properties"]["confidence"] == "high"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 12, "startColumn": 16, "endLine": 12, "endColumn": 39,
                      "snippet": {"text": "local = idx[idx % n == r] // n"}}
    assert first["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "pkg/pool.py"}
    assert first["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "HostPool.load",
                                                          "kind": "function"}]
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "file:///abs/path/m.py"
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["descriptor"]["id"] == "parse-error" and notification["level"] == "error"


def test_sarif_refuses_codes_outside_its_rules():
    with pytest.raises(KeyError, match="SH999"):
        to_sarif([Finding("SH999", "?", "a.py", 1)])


def test_markdown_help_has_every_section():
    text = rule_help_markdown(get_rule("SH105"))
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## References"):
        assert heading in text


def test_github_annotations():
    lines = render_github(FINDINGS).splitlines()
    assert lines == [
        "::notice file=/abs/path/m.py,line=7,col=1,title=SH109 scalar-read::`x.item()` reads a device value "
        "(confidence: low)",
        "::warning file=pkg/alloc.py,line=3,col=5,endLine=4,title=SH201 device-to-host-copy::`free.cpu()` "
        "copies, 100%25 blocking: a, b (confidence: medium)",
        "::error file=pkg/broken.py,line=1,col=5,title=parse-error::cannot parse as Python: invalid syntax",
        "::error file=pkg/pool.py,line=12,col=16,endLine=12,endColumn=39,title=SH101 boolean-mask-index::"
        "`idx[idx %25 n == r]` indexes with a boolean mask (inside a loop) (confidence: high)",
    ]


def test_github_escapes_properties():
    line = render_github([Finding("SH109", "a\nb", "dir,x/a:b.py", 2)])
    assert line == "::warning file=dir%2Cx/a%3Ab.py,line=2,col=1,title=SH109 scalar-read::a%0Ab (confidence: high)\n"


def test_json_round_trip():
    text = render_json(FindingSet(tuple(FINDINGS), tool="synchunt lint"))
    document = json.loads(text)
    assert document["schema"] == SCHEMA and document["tool"] == "synchunt lint"
    assert [item["code"] for item in document["findings"]] == ["SH109", "SH201", "SH101"]
    assert [item["code"] for item in document["problems"]] == ["parse-error"]
    assert document["findings"][2]["severity"] == "error" and document["findings"][2]["confidence"] == "high"
    assert sorted(load_json(text), key=lambda f: f.sort_key) == sorted(FINDINGS, key=lambda f: f.sort_key)
    with pytest.raises(ValueError, match="schema"):
        load_json(json.dumps({"schema": "other/1"}))


def test_text_lists_each_finding_and_a_summary():
    lines = render_text(FindingSet(tuple(FINDINGS), files_checked=4), RenderOptions(width=200)).splitlines()
    assert lines[0].startswith("/abs/path/m.py:7:1: SH109 note (low confidence)")
    assert any(line.startswith("pkg/pool.py:12:16: SH101 error (high confidence)") and "in HostPool.load" in line
               for line in lines)
    assert "    local = idx[idx % n == r] // n" in lines
    assert lines[-1] == "3 findings (1 error, 1 warning, 1 note) in 4 files; 1 file could not be analysed"


def test_real_findings_render_in_every_format(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import torch\ndef f(x: torch.Tensor):\n    for _ in range(2):\n        x[x > 0].item()\n")
    findings = lint_paths([path])
    assert {finding.code for finding in findings} == {"SH101", "SH109"}
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(to_sarif(findings))
    assert len(render_github(findings).splitlines()) == 2
    assert load_json(render_json(FindingSet(tuple(findings)))) == findings


def _through_rich(findings: FindingSet, width: int) -> str:
    from synchunt.render.findings.text import _group, finding_lines
    from synchunt.render.text import to_text

    return to_text(_group(finding_lines(findings)), RenderOptions(color=False, width=max(width, 400)))


def _finding(message: str, snippet: str | None = "x.item()") -> Finding:
    from synchunt.findings import Edit, Rewrite

    fix = Rewrite(rule="SH109", pattern="keep-on-device", title="t", line=1, column=1, end_line=1, end_column=9,
                  original="x.item()", replacement="x", edits=(Edit(1, 1, 1, 1, "y = 1\n"),),
                  condition="a 0-dim tensor → fine", safety="conditional")
    return Finding("SH109", message, "pkg/m.py", 1, 1, 1, 9, Severity.WARNING, Confidence.MEDIUM, "f", snippet,
                   fix=fix)


# Where each line fits, the text is written without rich; where one would wrap (or holds a character rich
# measures), rich writes it. Either way the bytes are rich's.
_HEAD = len("pkg/m.py:1:1: SH109 warning (medium confidence) ") + len(" in f")
_EDGES = {
    "ascii": "`x.item()` reads a device value",
    "arrows and ellipses": "`x.item()` → reads… a device value × 2",
    "exactly the width": "w" * (400 - _HEAD),
    "one past the width": "w" * (401 - _HEAD),
    "wide characters at the width": "漢" * ((400 - _HEAD) // 2),
    "wide characters past it": "漢" * ((400 - _HEAD) // 2 + 1),
    "trailing spaces": "`x.item()` reads   ",
    "long words past it": " ".join(["word" * 30] * 6),
}


@pytest.mark.parametrize("message", list(_EDGES.values()), ids=list(_EDGES))
@pytest.mark.parametrize("width", [80, 400, 600])
def test_plain_text_is_what_rich_writes(message: str, width: int) -> None:
    findings = FindingSet((*FINDINGS, _finding(message), _finding(message, None)), files_checked=2,
                          notes=("2 test files skipped", "", "a\tnote with a tab"))
    assert render_text(findings, RenderOptions(width=width)) == _through_rich(findings, width)


def test_plain_text_takes_only_lines_it_can_measure() -> None:
    from synchunt.render.findings.text import finding_lines, plain_text

    def plain(message: str) -> str | None:
        return plain_text(finding_lines(FindingSet((_finding(message),))), 400)

    exact = plain(_EDGES["exactly the width"])
    assert exact is not None and len(exact.splitlines()[0]) == 400 and plain(_EDGES["arrows and ellipses"])
    assert plain(_EDGES["one past the width"]) is None and plain(_EDGES["wide characters past it"]) is None
    assert plain_text(finding_lines(FindingSet((), notes=("a\tb",))), 400) is None  # rich expands the tab
