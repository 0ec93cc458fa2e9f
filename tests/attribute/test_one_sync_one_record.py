"""One sync, one record: trace and guard evidence of a capture joined per sync, never added together.

Real captures (torch.profiler on the CPU, then the guard pass) of a step with one loop per latent rule, and of a
user file calling into a library installed in a ``site-packages`` folder.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import synchunt
from synchunt.capture import CaptureSettings, capture, resolve_target
from synchunt.rules import RULES

HERE = Path(__file__).parent
PER_RULE = HERE / "sync_per_rule.py"
REPEATS = 3
# Lines of sync_per_rule.py each rule's syncs happen at (SH101 also syncs on the right-hand side of SH102's line).
RULE_LINES = {"SH101": {11, 42}, "SH102": {42}, "SH103": {15}, "SH104": {17}, "SH105": {19}, "SH106": {21},
              "SH107": {23}, "SH108": {25}, "SH109": {27}, "SH110": {29}, "SH111": {31}, "SH112": {33},
              "SH113": {35}, "SH114": {37}}
EXPECTED = {code: REPEATS for code in RULE_LINES} | {"SH101": 2 * REPEATS, "SH111": 0}
# multinomial's validity check reads the host only in its CUDA kernel: neither signal sees it on the CPU
# (tests/detect covers how a CPU trace still reports it).
TRACE_ONLY: set[str] = set()


@pytest.fixture(scope="module")
def per_rule(tmp_path_factory: pytest.TempPathFactory) -> dict[str, synchunt.Analysis]:
    out = tmp_path_factory.mktemp("per-rule")
    target = resolve_target(f"{PER_RULE}:step", setup="setup")
    both = capture(target, out / "both").path
    alone = capture(target, out / "trace", CaptureSettings(guard=False)).path
    return {"both": synchunt.analyze(both), "trace": synchunt.analyze(alone)}


def test_every_latent_rule_with_a_guard_hook_has_a_case() -> None:
    # A library's ops (torchvision::nms) need that library, which this suite's torch build cannot install: their
    # trace fixtures in tests/fixtures/traces stand for them.
    latent = {rule.code for rule in RULES if rule.latent_in_traces
              and any(op.op.startswith("aten::") for op in rule.trace_ops)}
    assert latent == set(RULE_LINES), "a rule a CPU trace can show needs a loop in sync_per_rule.py"


@pytest.mark.parametrize("code", sorted(RULE_LINES))
def test_both_signals_count_the_trace_syncs_once(per_rule: dict[str, synchunt.Analysis], code: str) -> None:
    trace_alone = [r for r in per_rule["trace"].records if r.rule == code]
    joined = [r for r in per_rule["both"].records if r.rule == code]
    assert len(trace_alone) == EXPECTED[code]
    assert len(joined) == len(trace_alone), "guard and trace evidence were added together"
    if not joined:
        return
    signals = {("trace",)} if code in TRACE_ONLY else {("trace", "guard")}
    assert {r.signals for r in joined} == signals
    assert {r.call_site.line for r in joined} == RULE_LINES[code]
    if code not in TRACE_ONLY:  # the guard knows the line; the trace alone names the def line or resolves it
        assert {r.call_site.line_source for r in joined} == {"runtime"}


def test_gate_counts_syncs_not_signals(per_rule: dict[str, synchunt.Analysis]) -> None:
    from synchunt.gate import evaluate

    trace_total = len(per_rule["trace"].records)
    assert evaluate(per_rule["both"], max_syncs=trace_total).passed
    failed = evaluate(per_rule["both"], max_syncs=trace_total - 1)
    assert not failed.passed and len(failed.counted) == trace_total


LIBRARY = '''
def select(lens):
    alive = lens[lens > 2]
    keep = lens[lens % 2 == 0]
    return alive.sum() + keep.sum()


def finished(flags):
    return bool(flags.max() == 0)
'''

SERVE = '''
import sys
sys.path.insert(0, {site!r})
import torch
import fakelib


def setup():
    return torch.arange(32)


def step(lens):
    total = fakelib.select(lens)
    done = fakelib.finished(lens)
    alive = lens[lens > 2]
    keep = lens[lens % 2 == 0]
    return total, done, alive, keep, lens.tolist()
'''


@pytest.fixture(scope="module")
def through_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("client")
    site = root / "env" / "lib" / "python3.11" / "site-packages"
    (site / "fakelib").mkdir(parents=True)
    (site / "fakelib" / "__init__.py").write_text(textwrap.dedent(LIBRARY))
    project = root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    (project / "serve.py").write_text(SERVE.format(site=str(site)))
    return capture(resolve_target(f"{project / 'serve.py'}:step", setup="setup"), root / "out").path


def _where(analysis: synchunt.Analysis) -> list[tuple]:
    return [(r.rule, r.call_site.file, r.call_site.line, r.call_site.user,
             None if r.via is None else (r.via.file, r.via.line), r.signals) for r in analysis.records]


def test_a_sync_inside_a_library_is_counted_once_at_its_line_via_the_users(through_library: Path) -> None:
    found = _where(synchunt.analyze(through_library))
    assert found == [
        ("SH101", "fakelib/__init__.py", 3, False, ("serve.py", 13), ("trace", "guard")),
        ("SH101", "fakelib/__init__.py", 4, False, ("serve.py", 13), ("trace", "guard")),
        ("SH110", "fakelib/__init__.py", 9, False, ("serve.py", 14), ("trace", "guard")),
        ("SH101", "serve.py", 15, True, None, ("trace", "guard")),  # two lines of one function stay two lines
        ("SH101", "serve.py", 16, True, None, ("trace", "guard")),
        ("SH201", "serve.py", 17, True, None, ("guard",)),  # .tolist() on the CPU: only the guard sees it
    ]


def test_guard_only_syncs_have_no_timestamp_and_keep_their_order(through_library: Path) -> None:
    records = synchunt.analyze(through_library).records
    assert [r.ts_us is None for r in records] == [False] * 5 + [True]
    stamped = [r.ts_us for r in records if r.ts_us is not None]
    assert stamped == sorted(stamped)


def test_skip_package_reaches_both_signals(through_library: Path) -> None:
    from synchunt.sites import FrameFilter

    analysis = synchunt.analyze(through_library, frame_filter=FrameFilter.with_extra(["fakelib"]))
    assert [(r.rule, r.call_site.file, r.call_site.line, r.via, r.signals) for r in analysis.records[:3]] == [
        ("SH101", "serve.py", 13, None, ("trace", "guard")),
        ("SH101", "serve.py", 13, None, ("trace", "guard")),
        ("SH110", "serve.py", 14, None, ("trace", "guard"))]
    assert len(analysis.records) == 6


def test_no_runner_frame_in_stacks_or_user_files(through_library: Path) -> None:
    analysis = synchunt.analyze(through_library)
    frames = [frame.file for record in analysis.records for frame in record.stack]
    assert frames and not any("synchunt" in file or file.endswith("threading.py") for file in frames)
    user_files = analysis.traces[0].synchunt["sources"]["user_files"]  # in this process: the tests' modules too
    assert "serve.py" in user_files and not any("/synchunt/" in file for file in user_files)


def test_annotations_go_on_the_users_file_with_the_library_line_in_the_message(through_library: Path) -> None:
    from synchunt.gate import evaluate
    from synchunt.render.gate.findings import gate_findings

    findings = gate_findings(evaluate(synchunt.analyze(through_library)))
    assert {finding.path for finding in findings} == {"serve.py"}
    library = [f for f in findings if "happens in the library" in f.message]
    assert sorted((f.line, f.code) for f in library) == [(13, "SH101"), (13, "SH101"), (14, "SH110")]
    assert any("fakelib/__init__.py:3 select" in f.message for f in library)


def test_every_format_shows_where_and_via(through_library: Path) -> None:
    from synchunt.render.analysis import ANALYSIS_FORMATS
    from synchunt.render.registry import RenderOptions

    analysis = synchunt.analyze(through_library)
    for name in ("text", "csv", "json", "html"):
        out = ANALYSIS_FORMATS.get(name)(analysis, RenderOptions(color=False, width=200))
        text = out.decode() if isinstance(out, bytes) else out
        assert "fakelib/__init__.py:3 select" in text and "serve.py:13 step" in text, name


def test_without_the_guard_the_users_line_is_the_call_into_the_library(through_library: Path) -> None:
    """A trace alone names the user's function by its first line; the call to the next frame gives the line."""
    project = through_library.parents[1] / "proj"
    alone = capture(resolve_target(f"{project / 'serve.py'}:step", setup="setup"), through_library.parents[1] / "t",
                    CaptureSettings(guard=False)).path
    vias = [(r.via.line, r.via.line_source) for r in synchunt.analyze(alone).records if r.via is not None]
    assert vias == [(13, "exact"), (13, "exact"), (14, "exact")]


OPTIMIZER_STEP = '''
import torch


def setup():
    weight = torch.nn.Parameter(torch.randn(4))
    return weight, torch.optim.Adam([weight])


def step(state):
    weight, optimizer = state
    loss = (weight * weight).sum()
    loss.backward()
    optimizer.step()
    return loss.item()
'''


def test_the_optimizers_host_step_counter_is_no_sync_in_either_signal(tmp_path: Path) -> None:
    """Adam reads its host ``step`` counter (``_get_value``): the guard quiets that call, and the trace sets the
    same reads aside, so the k-th trace sync still meets the k-th guard record (the user's ``.item()``)."""
    (tmp_path / "train.py").write_text(OPTIMIZER_STEP)
    analysis = synchunt.analyze(capture(resolve_target(f"{tmp_path / 'train.py'}:step", setup="setup"),
                                        tmp_path / "out").path)
    assert [(r.rule, r.call_site.line, r.signals) for r in analysis.records] == [("SH109", 15, ("trace", "guard"))]
    aside = analysis.traces[0].set_aside
    assert aside and all("`step` counter is a host tensor" in item.reason for item in aside)


GUARD_ONLY = '''
import torch


def setup():
    return torch.arange(4)


def step(x):
    return x.tolist()
'''


def test_a_step_whose_only_syncs_the_guard_saw_keeps_them_off_the_timeline_axis(tmp_path: Path) -> None:
    """``.tolist()`` on a CPU run leaves no trace event: with no timed sync on the thread to place it by, the
    report keeps it off the axis and says so (it used to fail building the page)."""
    from synchunt.report import build_report
    from synchunt.report.timeline import build_timeline
    from synchunt.trace import load_trace

    (tmp_path / "only_guard.py").write_text(GUARD_ONLY)
    path = capture(resolve_target(f"{tmp_path / 'only_guard.py'}:step", setup="setup"), tmp_path / "out").path
    trace = load_trace(path)
    analysis = synchunt.analyze(trace)
    assert [(r.rule, r.signals, r.ts_us) for r in analysis.records] == [("SH201", ("guard",), None)]
    timeline = build_timeline(trace, analysis)
    assert timeline.off_axis == 1 and timeline.syncs.empty and "kept off the axis" in timeline.note()
    assert build_report(analysis, [trace]) is not None


ALTERNATING = '''
import torch


def setup():
    return {"n": 0, "x": torch.arange(10.0)}


def step(state):
    state["n"] += 1
    x = state["x"]
    if state["n"] % 2 == 0:
        picked = x[x > 4]
    else:
        picked = x[x < 2]
    if state["n"] % 3 == 0:
        picked = picked + int(x.sum())
    return picked
'''


def test_a_guard_pass_that_took_another_path_lends_no_line_and_adds_no_sync(tmp_path: Path) -> None:
    """The guard pass runs after the recorded step; here it takes the other branch (line 15, and line 17's
    scalar read the recorded step never made). Its records are not joined: the recorded step's one sync stays,
    at its function's line with the reason, and a note says the passes differ."""
    (tmp_path / "alternating.py").write_text(ALTERNATING)
    analysis = synchunt.analyze(capture(resolve_target(f"{tmp_path / 'alternating.py'}:step", setup="setup"),
                                        tmp_path / "out").path)
    assert [(r.rule, r.call_site.line, r.call_site.line_source, r.signals) for r in analysis.records] == [
        ("SH101", 9, "def", ("trace",))]
    assert analysis.records[0].call_site.line_note
    assert analysis.traces[0].guard_diverged == 2
    assert any("took another path" in note for note in analysis.notes)


def test_a_line_only_the_source_gave_says_so(per_rule: dict[str, synchunt.Analysis]) -> None:
    """Without the guard a trace names functions only; a line found as the one form match in the function is a
    claim of the source, not a signal's, and says so (a sync at a line no form matches would land there too)."""
    from_source = [r.call_site for r in per_rule["trace"].records if r.call_site.line_source == "exact"]
    assert from_source and all(site.line_note and site.line_note.startswith("line from the source")
                               for site in from_source)
    assert all(r.call_site.line_note is None for r in per_rule["both"].records
               if r.call_site.line_source == "runtime")
