"""A trace's lines are read from its files as they were when captured: a file edited since (the fix of a
before/after comparison) shows no line for the old trace, rather than whatever line now sits at that number."""

from __future__ import annotations

from pathlib import Path

import synchunt
from synchunt.capture import CaptureSettings, capture, resolve_target
from synchunt.report.sources import site_sources

STEP = ("import torch\n\n\ndef setup():\n    return torch.arange(64)\n\n\ndef step(x):\n    y = x[x % 2 == 0]\n"
        "    return y.sum().item()\n")


def test_an_edited_file_gives_no_line_to_the_trace_before_the_edit(tmp_path: Path) -> None:
    source = tmp_path / "st.py"
    source.write_text(STEP)
    target = resolve_target(f"{source}:step", setup="setup")
    before = capture(target, tmp_path / "before").path
    alone = capture(target, tmp_path / "alone", CaptureSettings(guard=False)).path  # lines read from the source
    assert set(site_sources(synchunt.analyze(before)).values()) == {"y = x[x % 2 == 0]", "return y.sum().item()"}
    exact = {(r.rule, r.call_site.line, r.call_site.line_source) for r in synchunt.analyze(alone).records}
    assert exact == {("SH101", 9, "exact"), ("SH109", 10, "exact")}

    source.write_text("# fixed\n# below\n" + STEP.replace("x[x % 2 == 0]", "x[0::2]"))
    assert site_sources(synchunt.analyze(before)) == {}  # not `def step(x):` / `y = x[0::2]` of the new file
    edited = {(r.rule, r.call_site.line, r.call_site.line_source) for r in synchunt.analyze(alone).records}
    assert edited == {("SH101", 8, "def"), ("SH109", 8, "def")}  # the def line the trace names, not a guess
    after = capture(resolve_target(f"{source}:step", setup="setup"), tmp_path / "after").path
    assert set(site_sources(synchunt.analyze(after)).values()) == {"return y.sum().item()"}
