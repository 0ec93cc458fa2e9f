"""JUnit XML: test suites of test cases, each passing or failing once with a message and a text listing.

The model is generic (the gate makes one case per thread and scope); :func:`suite_from_findings` makes one case
per file of findings. XML is built with ``xml.etree``, so every name and text is escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from synchunt.findings import Finding

# Characters XML 1.0 cannot carry at all, even escaped (ElementTree would write them as they are).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class JUnitFailure:
    """Why a case failed: a one-line ``message`` and the full ``text`` (e.g. one line per finding)."""

    message: str
    text: str = ""
    type: str = "failure"


@dataclass(frozen=True)
class JUnitCase:
    name: str
    classname: str
    failure: JUnitFailure | None = None
    system_out: str = ""
    time_s: float = 0.0

    @property
    def failed(self) -> bool:
        return self.failure is not None


@dataclass(frozen=True)
class JUnitSuite:
    name: str
    cases: tuple[JUnitCase, ...]
    properties: tuple[tuple[str, str], ...] = field(default=())

    @property
    def failures(self) -> int:
        return sum(case.failed for case in self.cases)


def to_junit_element(suites: Sequence[JUnitSuite], *, name: str = "synchunt") -> ElementTree.Element:
    root = ElementTree.Element("testsuites", name=_xml(name), tests=str(sum(len(s.cases) for s in suites)),
                               failures=str(sum(s.failures for s in suites)), errors="0")
    for suite in suites:
        suite_element = ElementTree.SubElement(
            root, "testsuite", name=_xml(suite.name), tests=str(len(suite.cases)), failures=str(suite.failures),
            errors="0", skipped="0", time=_seconds(sum(case.time_s for case in suite.cases)))
        if suite.properties:
            properties = ElementTree.SubElement(suite_element, "properties")
            for key, value in suite.properties:
                ElementTree.SubElement(properties, "property", name=_xml(key), value=_xml(value))
        for case in suite.cases:
            case_element = ElementTree.SubElement(suite_element, "testcase", name=_xml(case.name),
                                                  classname=_xml(case.classname), time=_seconds(case.time_s))
            if case.failure is not None:
                failure = ElementTree.SubElement(case_element, "failure", message=_xml(case.failure.message),
                                                 type=case.failure.type)
                failure.text = _xml(case.failure.text)
            if case.system_out:
                ElementTree.SubElement(case_element, "system-out").text = _xml(case.system_out)
    return root


def render_junit(suites: Sequence[JUnitSuite], *, name: str = "synchunt") -> str:
    root = to_junit_element(suites, name=name)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def suite_from_findings(findings: Iterable[Finding], *, name: str, paths: Iterable[str] = ()) -> JUnitSuite:
    """One case per file: failing with its findings listed, or passing. ``paths`` adds files that had none."""
    by_path: dict[str, list[Finding]] = {path: [] for path in paths}
    for finding in sorted(findings, key=lambda item: item.sort_key):
        by_path.setdefault(finding.path, []).append(finding)
    cases = []
    for path in sorted(by_path):
        found = by_path[path]
        failure = None
        if found:
            noun = "finding" if len(found) == 1 else "findings"
            text = "\n".join(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}" + _fix_text(f) for f in found)
            failure = JUnitFailure(f"{len(found)} {noun}", text)
        cases.append(JUnitCase(name=path, classname=name, failure=failure))
    return JUnitSuite(name, tuple(cases))


def _fix_text(finding: Finding) -> str:
    if finding.fix is None:
        return ""
    condition = f" (if {finding.fix.condition})" if finding.fix.condition else ""
    return f"\n    fix: {' '.join(finding.fix.replacement.split())}{condition}"


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _seconds(value: float) -> str:
    return f"{value:.3f}"
