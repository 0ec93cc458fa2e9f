"""The annotated trace: the original events plus the synchunt track, valid, loadable, and matching the findings."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from impact_fixtures import HOST_PID, KinetoTrace
from trace_event_format import load_events, problems
from typer.testing import CliRunner

from synchunt.annotate import CATEGORY, COUNTER_NAME, TRACK_TID, SyncMark, annotate_trace, write_annotated
from synchunt.attribute import analyze
from synchunt.cli import app
from synchunt.cli.annotate import default_annotated_path
from synchunt.errors import TraceError, UsageError

REAL = ["hta/critical_path/cuda_event_sync/event_sync_trace.json.gz",
        "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "real/tracelens/gaunernst_bert-small-uncased__1016001.json.gz",
        "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"]
runner = CliRunner()


def _fixture_trace(tmp_path: Path) -> Path:
    trace = KinetoTrace()
    trace.kernel("A", 10, 20, 100)
    trace.item(30, copy_start=121, returned=130)
    trace.kernel("B", 200, 210, 10)
    trace.runtime("cudaDeviceSynchronize", 250, 20)
    return trace.write(tmp_path / "fixture.pt.trace.json.gz")


def _ours(events: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"i": [], "s": [], "f": [], "C": []}
    for event in events:
        if event.get("cat") == CATEGORY:
            out[event["ph"]].append(event)
    return out


def _findings(path: Path) -> list[dict]:
    return [{k: v for k, v in sync.items() if k != "trace"} for sync in analyze(path).to_json()["syncs"]]


def test_fixture_trace_is_annotated_with_instants_flows_and_a_counter(tmp_path):
    source = _fixture_trace(tmp_path)
    out, count = annotate_trace(source, tmp_path / "out.pt.trace.json.gz")
    data = load_events(out)
    original = load_events(source)["traceEvents"]
    assert data["traceEvents"][:len(original)] == original  # the original events, unchanged and first
    assert problems(data["traceEvents"], CATEGORY) == []
    ours = _ours(data["traceEvents"])
    assert count == 2 and [e["args"]["rule"] for e in ours["i"]] == ["SH109", "SH301"]
    assert all(e["tid"] == TRACK_TID and e["pid"] == HOST_PID for e in ours["i"])
    item = ours["i"][0]["args"]
    assert item["stall (µs)"] == 98 and item["device idle caused (µs)"] == 87 and item["fix"]
    assert item["waited on"] == ["A (100 µs)", "Memcpy DtoH (Device -> Pageable) (2 µs)"]
    # one arrow per waited-on activity, from the blocked thread's call into the activity
    assert [(f["pid"], f["tid"]) for f in ours["f"]] == [(0, 7), (0, 7)]
    assert {s["ts"] for s in ours["s"]} == {31}
    counters = [e["args"]["stall (µs)"] for e in ours["C"] if e["name"] == COUNTER_NAME]
    assert counters == [0, 98, 98 + 20]
    names = [e for e in data["traceEvents"] if e.get("ph") == "M" and e.get("tid") == TRACK_TID]
    assert [e["args"]["name"] for e in names if e["name"] == "thread_name"] == ["synchunt syncs"]


def test_annotated_trace_loads_back_with_the_same_findings(tmp_path):
    source = _fixture_trace(tmp_path)
    out, _ = annotate_trace(source, tmp_path / "out.pt.trace.json.gz")
    assert _findings(out) == _findings(source)


def test_the_annotated_trace_is_readable_as_every_output_is(tmp_path):
    """Written through a temporary file, yet with the permissions `open` gives a new file (0644 under umask 022),
    so a CI artifact upload or a colleague's Perfetto can read it."""
    import os

    source = _fixture_trace(tmp_path)
    previous = os.umask(0o022)
    try:
        out, _ = annotate_trace(source, tmp_path / "out.pt.trace.json.gz")
    finally:
        os.umask(previous)
    assert out.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("relative", REAL)
def test_real_traces_round_trip(tmp_path, relative, shared_trace):
    source = shared_trace(relative)
    out, count = annotate_trace(source, tmp_path / "annotated.pt.trace.json.gz")
    data = load_events(out)
    assert problems(data["traceEvents"], CATEGORY) == []
    findings = _findings(source)
    assert _findings(out) == findings
    ours = _ours(data["traceEvents"])
    assert count == len(findings) == len(ours["i"])
    assert [e["args"]["rule"] for e in ours["i"]] == [s["rule"] for s in sorted(findings, key=lambda s: s["ts_us"])]
    # top-level metadata goes through too
    assert {k: v for k, v in data.items() if k != "traceEvents"} == \
        {k: v for k, v in load_events(source).items() if k != "traceEvents"}


def test_profiled_trace_marks_carry_the_exact_call_site(profiled, tmp_path):
    source = profiled("hicache-dcp", small=True, impl="masked", device="cpu")
    out, count = annotate_trace(source, tmp_path / "annotated.pt.trace.json.gz")
    instants = _ours(load_events(out)["traceEvents"])["i"]
    syncs = analyze(source).syncs
    assert count == len(syncs) == len(instants) > 0
    expected = {f"{row.file}:{row.line} {row.function}" for row in syncs.itertuples()}
    assert {e["args"]["call site"] for e in instants} == expected
    assert all(e["args"]["call site"] in e["name"] for e in instants)
    assert _findings(out) == _findings(source)


def test_plain_json_output(tmp_path):
    source = _fixture_trace(tmp_path)
    out, _ = annotate_trace(source, tmp_path / "out.json")
    assert out.read_bytes()[:1] == b"{" and problems(load_events(out)["traceEvents"], CATEGORY) == []


def test_never_replaces_the_source_nor_an_existing_file_without_force(tmp_path):
    source = _fixture_trace(tmp_path)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    with pytest.raises(UsageError, match="is the source trace"):
        write_annotated(source, source, [])
    with pytest.raises(UsageError, match="is the source trace"):
        write_annotated(source, tmp_path / "." / source.name, [], force=True)
    link = tmp_path / "link.pt.trace.json.gz"
    link.hardlink_to(source)
    with pytest.raises(UsageError, match="is the source trace"):
        write_annotated(source, link, [], force=True)
    existing = tmp_path / "existing.json.gz"
    existing.write_text("mine")
    with pytest.raises(UsageError, match="exists; pass --force"):
        write_annotated(source, existing, [])
    assert existing.read_text() == "mine"
    write_annotated(source, existing, [], force=True)
    assert load_events(existing)["traceEvents"] == load_events(source)["traceEvents"]
    assert hashlib.sha256(source.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_unreadable_source_leaves_no_output(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [}')
    out = tmp_path / "out.json.gz"
    with pytest.raises(TraceError):
        write_annotated(bad, out, [])
    no_events = tmp_path / "none.json"
    no_events.write_text('{"schemaVersion": 1}')
    with pytest.raises(TraceError, match="no traceEvents"):
        write_annotated(no_events, out, [])
    assert sorted(tmp_path.iterdir()) == sorted([bad, no_events])


def test_flows_skip_work_that_ended_before_the_call(tmp_path):
    from synchunt.annotate import WaitTarget, track_events

    mark = SyncMark(ts_us=100, dur_us=10, pid=1, tid=1, rule="SH301", title="t", fix="f", stall_us=10,
                    waited_on=(WaitTarget(pid=0, tid=7, ts_us=10, dur_us=5, name="old"),
                               WaitTarget(pid=0, tid=7, ts_us=90, dur_us=15, name="running")))
    flows = [e for e in track_events([mark], 5) if e["ph"] in ("s", "f")]
    assert [(e["ph"], e["id"], e["ts"]) for e in flows] == [("s", 5, 100), ("f", 5, 102.5)]


def test_cli_annotate_default_name_and_refusal(tmp_path):
    source = shutil.copy(_fixture_trace(tmp_path), tmp_path / "run.pt.trace.json.gz")
    first = runner.invoke(app, ["annotate", str(source)])
    assert first.exit_code == 0, first.output
    written = default_annotated_path(Path(source))
    assert written.name == "run.synchunt.pt.trace.json.gz" and written.exists()
    assert "2 syncs marked" in first.output
    again = runner.invoke(app, ["annotate", str(source)])
    assert isinstance(again.exception, UsageError) and "--force" in str(again.exception)
    forced = runner.invoke(app, ["annotate", str(source), "--force"])
    assert forced.exit_code == 0, forced.output
    same = runner.invoke(app, ["annotate", str(source), "-o", str(source), "--force"])
    assert isinstance(same.exception, UsageError)


def test_cli_errors_are_one_line_and_exit_2(tmp_path):
    import subprocess
    import sys

    source = _fixture_trace(tmp_path)
    synchunt = Path(sys.executable).with_name("synchunt")
    result = subprocess.run([str(synchunt), "annotate", str(source), "-o", str(source)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error:") and "Traceback" not in result.stderr
