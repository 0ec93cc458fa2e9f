"""Every gate format over one shared gate result: 11 real syncs (8 masked-HiCache SH101 at one call site, 3 from a
CUDA trace without Python frames), one of them allowed by a baseline that also holds a stale entry."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema
import pytest

from synchunt.errors import UsageError
from synchunt.findings import Finding, Severity
from synchunt.gate import GateResult, evaluate, load_baseline
from synchunt.render.gate import GATE_FORMATS
from synchunt.render.gate.headline import gate_headline
from synchunt.render.junit_xml import JUnitCase, JUnitFailure, JUnitSuite, render_junit, suite_from_findings
from synchunt.render.registry import RenderOptions
from synchunt.rules import get_rule

SARIF_SCHEMA = Path(__file__).resolve().parents[1] / "lint" / "data" / "sarif-schema-2.1.0.json"
BASELINE = """\
schema = "synchunt.baseline/1"

[[allow]]
rule = "SH302"
site = "<no Python frame>"
op = "cudaEventSynchronize"
reason = "waits for the prefetch event"

[[allow]]
rule = "SH105"
site = "workloads/hicache_dcp/translate.py:dcp_kernel_indices_masked"
op = "aten::_unique2"
reason = "removed by the sliced rewrite"
expires = 2026-01-31
"""
GITHUB_LINE = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=\d+,title=([^:]+)::(.+)$")


@pytest.fixture(scope="module")
def baseline_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gate") / "synchunt-baseline.toml"
    path.write_text(BASELINE)
    return path


def gate(analysis, baseline_path: Path, **options) -> GateResult:
    import datetime as dt

    return evaluate(analysis, baseline=load_baseline(baseline_path), today=dt.date(2026, 1, 15), **options)


@pytest.fixture(scope="module")
def result(shared_analysis, baseline_path) -> GateResult:
    return gate(shared_analysis, baseline_path)


def masked_line(result: GateResult) -> int:
    sites = result.analysis.call_sites
    return int(sites[sites["function"] == "dcp_kernel_indices_masked"].iloc[0]["line"])


def test_the_shared_result_counts_10_allows_1_and_has_one_stale_entry(result):
    assert (len(result.counted), len(result.allowed), result.budget) == (10, 1, 0)
    assert [u.entry.key.rule for u in result.stale_entries] == ["SH105"] and not result.expired_entries


def test_github_annotates_each_call_site_and_the_stale_entry_at_its_line(result, baseline_path):
    lines = render_gate_document(result, "github").splitlines()
    parsed = [GITHUB_LINE.match(line) for line in lines]
    assert all(parsed), lines
    by_title = {match[4]: match for match in parsed}
    assert set(by_title) == {"SH101 boolean-mask-index", "SH110 tensor-truthiness", "SH301 device-synchronize",
                             "baseline-stale"}
    masked = by_title["SH101 boolean-mask-index"]
    assert masked[1] == "error" and masked[2] == "workloads/hicache_dcp/translate.py"
    assert int(masked[3]) == masked_line(result)
    assert masked[5].startswith("8 latent syncs (SH101 boolean-mask-index: aten::nonzero) on scheduler")
    assert get_rule("SH101").fix.split("`")[0] in masked[5]
    assert by_title["SH110 tensor-truthiness"][2].endswith("GATE-three-confirmed-no-frames.json")
    stale = by_title["baseline-stale"]
    assert (stale[1], stale[2], stale[3]) == ("warning", str(baseline_path), "9")
    assert "SH105 aten::_unique2" in stale[5] and "expired on 2026-01-31" not in stale[5]


def test_github_levels_follow_the_budget_and_strictness(shared_analysis, baseline_path):
    within = render_gate_document(gate(shared_analysis, baseline_path, max_syncs=10), "github")
    assert within.count("::warning ") == 4 and "::error " not in within
    strict = render_gate_document(gate(shared_analysis, baseline_path, max_syncs=10, strict=True), "github")
    assert strict.count("::warning ") == 3 and strict.count("::error ") == 1


def test_sarif_is_valid_2_1_0_with_catalogue_rules_and_one_result_per_call_site(result, baseline_path):
    log = json.loads(render_gate_document(result, "sarif"))
    schema = json.loads(SARIF_SCHEMA.read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert {"SH101", "SH110", "SH301", "SH302"} <= {rule["id"] for rule in rules}
    sh101 = next(rule for rule in rules if rule["id"] == "SH101")
    assert get_rule("SH101").what_it_does in sh101["help"]["text"]
    assert get_rule("SH101").why_bad in sh101["help"]["markdown"]
    results = run["results"]
    assert sorted(r["ruleId"] for r in results) == ["SH101", "SH110", "SH301"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] and r["level"] == "error" for r in results)
    masked = next(r for r in results if r["ruleId"] == "SH101")
    (location,) = masked["locations"]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "workloads/hicache_dcp/translate.py"
    assert location["physicalLocation"]["region"]["startLine"] == masked_line(result)
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "dcp_kernel_indices_masked"
    assert masked["properties"]["confidence"] == "medium"  # latent: would sync on a GPU
    assert next(r for r in results if r["ruleId"] == "SH110")["properties"]["confidence"] == "high"
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["descriptor"]["id"] == "baseline-stale"
    assert notification["locations"][0]["physicalLocation"]["region"]["startLine"] == 9


def test_junit_has_a_budget_case_and_one_case_per_thread_and_scope(result):
    root = ElementTree.fromstring(render_gate_document(result, "junit"))
    (suite,) = root.findall("testsuite")
    cases = {(case.get("classname"), case.get("name")): case for case in suite.findall("testcase")}
    assert set(cases) == {("synchunt.gate", "sync budget"), ("synchunt.gate.scheduler", "start_loading"),
                          ("synchunt.gate.thread 948300 (python3.10)", "(no scope)"), ("synchunt.gate", "baseline")}
    assert (suite.get("tests"), suite.get("failures")) == ("4", "3")
    scheduler = cases[("synchunt.gate.scheduler", "start_loading")].find("failure")
    assert scheduler.get("message") == "8 syncs on thread scheduler in start_loading"
    listed = scheduler.text.splitlines()
    assert len(listed) == 8 and all(line.startswith("SH101 aten::nonzero at workloads/hicache_dcp/translate.py:")
                                    for line in listed)
    assert {line.split("[")[1].split("]")[0] for line in listed} == {f"start_loading › layer_{i}" for i in range(4)}
    cuda = cases[("synchunt.gate.thread 948300 (python3.10)", "(no scope)")]
    assert sorted(line.split()[0] for line in cuda.find("failure").text.splitlines()) == ["SH110", "SH301"]
    assert "SH302 cudaEventSynchronize" in cuda.find("system-out").text  # allowed by the baseline
    budget = cases[("synchunt.gate", "sync budget")].find("failure")
    assert budget.get("message") == gate_headline(result)
    baseline = cases[("synchunt.gate", "baseline")]
    assert baseline.find("failure") is None and "[stale]" in baseline.find("system-out").text
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties == {"budget": "0", "syncs": "11", "counted": "10", "allowed": "1", "mode": "auto"}


def test_junit_passes_within_the_budget_and_fails_the_baseline_case_when_strict(shared_analysis, baseline_path):
    within = ElementTree.fromstring(render_gate_document(gate(shared_analysis, baseline_path, max_syncs=10),
                                                         "junit"))
    assert within.get("failures") == "0" and within.get("tests") == "4"
    strict = ElementTree.fromstring(render_gate_document(
        gate(shared_analysis, baseline_path, max_syncs=10, strict=True), "junit"))
    failed = [case.get("name") for case in strict.iter("testcase") if case.find("failure") is not None]
    assert failed == ["baseline"]


def test_text_shows_the_counted_syncs_the_baseline_and_the_verdict_last(result):
    text = GATE_FORMATS.get("text")(result, RenderOptions(width=200))
    assert text.rstrip().splitlines()[-1] == gate_headline(result)
    assert gate_headline(result).startswith("gate failed: 10 syncs counted, budget 0")
    assert "1 allowed by the baseline; 1 stale baseline entry" in gate_headline(result)
    assert "dcp_kernel_indices_masked" in text and "removed by the sliced rewrite" in text
    assert "waits for the prefetch event" in text and "stale" in text


def test_an_unknown_document_format_is_refused(result):
    with pytest.raises(UsageError, match="no gate format 'html'; formats: text, github, json, junit, sarif"):
        GATE_FORMATS.get("html")


def test_junit_escapes_markup_and_drops_characters_xml_cannot_carry():
    case = JUnitCase('a <b> & "c"', "x.y", JUnitFailure("1 finding \x01", "line <1>\x00 & more"))
    root = ElementTree.fromstring(render_junit([JUnitSuite("s & t", (case,), (("k", "<v>"),))]))
    parsed = root.find("testsuite/testcase")
    assert parsed.get("name") == 'a <b> & "c"'
    assert parsed.find("failure").get("message") == "1 finding \ufffd"
    assert parsed.find("failure").text == "line <1>\ufffd & more"
    assert root.find("testsuite/properties/property").get("value") == "<v>"


def test_junit_from_findings_makes_one_case_per_file():
    findings = [Finding("SH101", "mask index", "b.py", 3), Finding("SH110", "item", "b.py", 9, severity=Severity.ERROR)]
    suite = suite_from_findings(findings, name="synchunt lint", paths=["a.py", "b.py"])
    assert [(case.name, case.failed) for case in suite.cases] == [("a.py", False), ("b.py", True)]
    failure = suite.cases[1].failure
    assert failure.message == "2 findings"
    assert failure.text.splitlines() == ["b.py:3:1: SH101 mask index", "b.py:9:1: SH110 item"]


def render_gate_document(result: GateResult, name: str) -> str:
    return GATE_FORMATS.get(name)(result)


def test_a_sync_only_the_guard_saw_has_no_stall_of_zero(tmp_path: Path) -> None:
    """`.tolist()` on the CPU: the guard sees it, the trace has no event to time; every format says so."""
    import synchunt
    from synchunt.capture import capture, resolve_target

    (tmp_path / "listing.py").write_text(
        "import torch\n\n\ndef setup():\n    return torch.arange(4)\n\n\ndef step(t):\n    return t.tolist()\n")
    traced = capture(resolve_target(f"{tmp_path / 'listing.py'}:step", setup="setup"), tmp_path / "out").path
    result = evaluate(synchunt.analyze(traced))
    assert [record.signals for record in result.analysis.records] == [("guard",)]
    options = RenderOptions(color=False)
    github = GATE_FORMATS.get("github")(result, options)
    junit = GATE_FORMATS.get("junit")(result, options)
    assert "stall not measured (seen by the guard only)" in github and "0.0 µs" not in github
    assert "stall not measured" in junit and "0.0 µs" not in junit


def test_a_shadow_runs_annotations_say_it_was_one(shared_analysis) -> None:
    """Under the shadow device a latent sync is a GPU run's: the annotation says so, not a CPU run's caveat."""
    from synchunt.attribute import Analysis
    from synchunt.render.gate.findings import gate_findings
    from synchunt.trace.vocab import SHADOW_KEY

    data = shared_analysis.to_json()
    latent = [sync for sync in data["syncs"] if not sync["confirmed"]]
    assert latent
    cpu = Analysis.from_json({**data, "syncs": latent})
    shadow = Analysis.from_json({**data, "syncs": latent, "traces": [
        {**info, "synchunt": {**info.get("synchunt", {}), SHADOW_KEY: {"notes": [], "device_tensors": 3}}}
        for info in data["traces"]]})
    assert all("a CPU run" in finding.message for finding in gate_findings(evaluate(cpu)))
    messages = [finding.message for finding in gate_findings(evaluate(shadow))]
    assert messages and all("shadow device" in m and "a CPU run" not in m for m in messages)
