"""Host-side code (processors, tokenizers, CPU backends): unknown-device tensors there are low confidence."""

from __future__ import annotations

import ast

import pytest

from synchunt.findings import Confidence
from synchunt.lint import lint_source
from synchunt.lint.hostside import host_side_class, host_side_module

BODY = ("    def run(self, lengths: torch.Tensor):\n"
        "        return lengths.tolist(), torch.ones(2, device='cuda').tolist()\n")


@pytest.mark.parametrize(("path", "host"), [
    ("pkg/multimodal/processors/qwen_vl.py", True), ("vllm/model_executor/layers/ops/cpu/attn.py", True),
    ("pkg/cpu_worker.py", True), ("models/processing_qwen.py", True), ("pkg/layers/attention.py", False),
    ("pkg/logits_processor.py", False), ("pkg/cpuinfo.py", False),
])
def test_host_side_modules(path: str, host: bool):
    assert host_side_module(path) is host


@pytest.mark.parametrize(("source", "host"), [
    ("class QwenVLMultiModalProcessor(Base): pass", True), ("class Fast(ProcessorMixin): pass", True),
    ("class MyImageProcessor: pass", True), ("class Foo(SGLangBaseProcessor): pass", True),
    ("class MinPLogitsProcessor(LogitsProcessor): pass", False), ("class Attention(nn.Module): pass", False),
])
def test_host_side_classes(source: str, host: bool):
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef) and host_side_class(node) is host


def test_unknown_device_findings_drop_to_low_but_device_evidence_stays():
    processor = "import torch\nclass VLImageProcessor:\n" + BODY
    model = "import torch\nclass VLModel:\n" + BODY
    assert [finding.confidence for finding in lint_source(processor, "p.py")] == [Confidence.LOW, Confidence.HIGH]
    assert [finding.confidence for finding in lint_source(model, "m.py")] == [Confidence.MEDIUM, Confidence.HIGH]
    assert [f.confidence for f in lint_source(model, "pkg/processors/m.py")] == [Confidence.LOW, Confidence.HIGH]


HOST_PATHS = '''import torch


def fallback(ids: torch.Tensor, context: torch.Tensor, other: torch.Tensor):
    if ids.is_cuda:
        return context.tolist()
    return context.to(device=ids.device).tolist()


def guarded(raw, compressed, x: torch.Tensor):
    if not raw.positions.is_cuda and not torch.equal(raw.positions, compressed.positions):
        raise RuntimeError("disagree")
    if x.device.type == "cpu":
        x.tolist()
    else:
        x.tolist()
    return torch.equal(raw.positions, compressed.positions)


class Pool:
    def load(self, indices: torch.Tensor):
        if not indices.is_cuda:
            indices = indices.to(self.device)
        return indices
'''


def test_the_host_path_of_a_device_check_is_host_side_code():
    found = {(finding.line, finding.code): finding.confidence for finding in lint_source(HOST_PATHS, "m.py")}
    assert found[6, "SH201"] is Confidence.MEDIUM  # the device branch
    assert found[7, "SH201"] is Confidence.LOW  # after `if ids.is_cuda: return`
    assert found[11, "SH113"] is Confidence.LOW  # `not raw.positions.is_cuda and ...`
    assert (14, "SH201") not in found  # x itself is narrowed to the host there
    assert found[16, "SH201"] is Confidence.HIGH  # the else of a host check: on the device
    assert found[17, "SH113"] is Confidence.MEDIUM  # past the `and`: no longer on the host path
    assert found[23, "SH202"] is Confidence.MEDIUM  # an upload on the host path is what it is there for
