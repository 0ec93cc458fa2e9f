"""Each rule's static forms against its fixture: lines marked `# expect: <confidence>` are flagged with that
confidence, and no other line is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synchunt.findings import Confidence
from synchunt.lint import lint_paths, lint_source
from synchunt.lint.forms import FORMS, resolve
from synchunt.rules import RULES

FIXTURES = Path(__file__).parent / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*(high|medium|low)")
STATIC_RULES = [rule for rule in RULES if rule.has_static_form]


def expected_lines(path: Path) -> set[tuple[int, str]]:
    found = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            found.add((number, match.group(1)))
    return found


@pytest.mark.parametrize("rule", STATIC_RULES, ids=lambda rule: rule.code)
def test_fixture_findings_match_markers(rule):
    path = FIXTURES / f"{rule.code}.py"
    assert path.exists(), f"rule {rule.code} has a static form but no fixture"
    findings = lint_paths([path], select=[rule.code])
    assert all(finding.code == rule.code for finding in findings)
    assert {(finding.line, finding.confidence.value) for finding in findings} == expected_lines(path)


@pytest.mark.parametrize("rule", STATIC_RULES, ids=lambda rule: rule.code)
def test_fixture_has_positive_and_negative_lines(rule):
    path = FIXTURES / f"{rule.code}.py"
    code_lines = [line for line in path.read_text().splitlines()
                  if line.strip() and not line.lstrip().startswith(("#", "def ", "import", "from", '"""'))]
    marked = expected_lines(path)
    assert marked, "no positive example"
    assert len(code_lines) > len(marked), "no negative example"


def test_every_catalogue_form_has_a_detector():
    for rule in RULES:
        for spec in rule.lint_forms:
            form, argument = resolve(spec)
            assert form.name in FORMS
            assert (argument is not None) == form.takes_argument


def test_unknown_form_is_refused():
    with pytest.raises(KeyError, match="no detector"):
        resolve("teleport")
    with pytest.raises(ValueError, match="needs"):
        resolve("method")


def test_seed_mask_is_flagged_and_stride_is_clean():
    mask = "def load(indices, dcp_size, dcp_rank):\n    return indices[indices % dcp_size == dcp_rank] // dcp_size\n"
    stride = "def load(indices, dcp_size, dcp_rank):\n    return indices[dcp_rank::dcp_size] // dcp_size\n"
    header = "import torch\n"
    flagged = lint_source(header + mask, "mask.py")
    assert [finding.code for finding in flagged] == ["SH101"]
    assert flagged[0].confidence is Confidence.MEDIUM
    assert (flagged[0].line, flagged[0].column) == (3, 12)
    assert lint_source(header + stride, "stride.py") == []


def test_seed_loop_inside_stream_is_an_error():
    source = (
        "import torch\n"
        "def load_to_device_per_layer(device_module, load_stream, host_indices, device_indices, dcp_size, rank):\n"
        "    with device_module.stream(load_stream):\n"
        "        local = device_indices[device_indices % dcp_size == rank] // dcp_size\n"
        "    plain = device_indices[device_indices % dcp_size == rank]\n"
        "    for layer in range(27):\n"
        "        looped = device_indices.sum().item()\n"
    )
    findings = {finding.line: finding for finding in lint_source(source, "seed.py")}
    assert findings[4].severity.value == "error" and "stream" in findings[4].message
    assert findings[5].severity.value == "warning"
    assert findings[7].severity.value == "error" and "loop" in findings[7].message


def test_triton_kernels_are_not_linted():
    source = (
        "import torch\nimport triton\n"
        "@triton.jit\n"
        "def kernel(x_ptr, n):\n"
        "    if n > 0:\n"
        "        x = x_ptr.item()\n"
        "def host(x: torch.Tensor):\n"
        "    return x.item()\n"
    )
    assert [finding.line for finding in lint_source(source, "k.py")] == [8]


def test_file_without_torch_import_is_low_confidence():
    findings = lint_source("def f(x):\n    return x.cpu()\n", "plain.py")
    assert [finding.confidence for finding in findings] == [Confidence.LOW]
    assert findings[0].severity.value == "note"


def test_self_attributes_carry_provenance():
    source = (
        "import torch\n"
        "class Pool:\n"
        "    def __init__(self, n):\n"
        "        self.free_pages = torch.arange(n, device='cuda')\n"
        "        self.host_table = torch.zeros(n)\n"
        "    def free(self, index):\n"
        "        pages = torch.unique(self.free_pages)\n"
        "        return self.host_table.tolist(), pages\n"
    )
    findings = lint_source(source, "pool.py")
    assert [(finding.code, finding.line, finding.confidence) for finding in findings] == [
        ("SH105", 7, Confidence.HIGH)]
    assert findings[0].scope == "Pool.free"
