"""Trace call sites get their exact line: Kineto names the function's first line, the lint's matchers find the
syncing line inside it (``line_source: exact``); ambiguous or unreadable sources keep the first line (``def``)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import synchunt
from synchunt.capture import CaptureSettings, capture, resolve_target
from synchunt.gate import evaluate
from synchunt.render.gate import GATE_FORMATS

REPO = Path(__file__).resolve().parents[2]
MASKED = REPO / "traces" / "samples" / "hicache-dcp-masked-cpu.pt.trace.json.gz"
TRANSLATE = REPO / "workloads" / "hicache_dcp" / "translate.py"


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def test_the_hicache_mask_line_not_the_def_line():
    result = synchunt.analyze(MASKED)
    sites = {(s.call_site.file, s.call_site.line, s.call_site.def_line, s.call_site.line_source)
             for s in result.records}
    mask_line = _line_of(TRANSLATE, "indices[indices % dcp_size == dcp_rank]")
    def_line = _line_of(TRANSLATE, "def dcp_kernel_indices_masked")
    assert sites == {("workloads/hicache_dcp/translate.py", mask_line, def_line, "exact")}
    gate = evaluate(result)
    assert f"line={mask_line}," in GATE_FORMATS.get("github")(gate)
    sarif = json.loads(GATE_FORMATS.get("sarif")(gate))
    assert {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in sarif["runs"][0]["results"]} == \
        {mask_line}


def test_a_user_file_outside_the_repository(tmp_path):
    script = tmp_path / "serve.py"
    script.write_text(textwrap.dedent("""
        import torch


        def evict(lengths):
            keep = lengths > 2
            survivors = lengths[keep]
            return survivors * 2


        def twice(lengths):
            a = lengths[lengths > 1]
            b = lengths[lengths > 2]
            return a, b


        def run():
            lengths = torch.arange(8)
            evict(lengths)
            twice(lengths)
    """))
    trace = capture(resolve_target(f"{script}:run"), tmp_path / "out", CaptureSettings(guard=False)).path
    by_function = {r.call_site.function: r.call_site for r in synchunt.analyze(trace).records}
    assert (by_function["evict"].line, by_function["evict"].line_source) == (_line_of(script, "lengths[keep]"),
                                                                             "exact")
    # Two mask reads in one function: which one a trace sync is cannot be told, so the first line stays.
    assert (by_function["twice"].line, by_function["twice"].line_source) == (_line_of(script, "def twice"), "def")
    script.unlink()  # the source is gone: the trace keeps the function's first line
    gone = {r.call_site.function: r.call_site for r in synchunt.analyze(trace).records}
    assert (gone["evict"].line, gone["evict"].line_source) == (_line_of_text(trace, "evict"), "def")


def _line_of_text(trace: Path, function: str) -> int:
    loaded = synchunt.load_trace(trace)
    frames = loaded.python_frames
    return int(frames[frames["function"] == function]["line"].iloc[0])
