"""Hostile and damaged input: one TraceError (never a traceback), or the events before a cut kept as partial."""

from __future__ import annotations

import gzip
import json
import os

import pytest

import synchunt
from synchunt.errors import TraceError
from synchunt.trace import load_trace
from synchunt.trace.decode import decode
from tests.trace.conftest import kineto_layout, many_events, one_line, op


def _load_or_error(path):
    try:
        return load_trace(path)
    except TraceError as error:
        assert "\n" not in str(error) and str(path) in str(error)
        return error


@pytest.mark.parametrize("content", [
    b"", b"   ", b"{not json", b'{"foo": 1}', b"[1, 2]", b'{"traceEvents": 5}', b'{"traceEvents": [1]}',
    b"\x1f\x8b\x08garbage", gzip.compress(b"{not json"), b"\xef\xbb\xbf", b'{"traceEvents": [{"ph": "X"',
    b'{"traceEvents": [' + b"[" * 10_000 + b"]" * 10_000 + b"]}",
    b'{"traceEvents": [{"ph": "X", "args": {"deep": ' + b"[" * 10_000 + b"]" * 10_000 + b"}}]}",
    b'{"traceEvents": [], "traceName": ' + b"[" * 10_000 + b"]" * 10_000 + b"}",
    b'{"traceEvents": [{"ph": "X", "ts": 1e999}]}',
])
def test_unusable_input_is_one_trace_error(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert isinstance(_load_or_error(path), TraceError)


@pytest.mark.parametrize("event, check", [
    # A time past year 30,000 is as unusable as a missing one (the event is dropped), a century-long duration as 0.
    ({"ph": "X", "name": "a", "ts": 1e308, "dur": 1e308, "pid": 1, "tid": 1}, lambda e: len(e) == 0),
    ({"ph": "X", "name": "a", "ts": 5, "dur": 1e308, "pid": 1, "tid": 1}, lambda e: e["dur"].tolist() == [0.0]),
    ({"ph": "X", "name": "a", "ts": 5, "dur": 1, "pid": 1, "tid": 1, "args": {"correlation": 10**400}},
     lambda e: e["correlation"].tolist() == [-1]),
    ({"ph": "X", "name": "a", "ts": 5, "dur": 1, "pid": 10**400, "tid": 1}, lambda e: len(e) == 1),
    ({"ph": "X", "name": "a", "ts": 5, "dur": 1, "pid": [], "tid": {"x": 1}}, lambda e: e["pid"].tolist() == ["[]"]),
    ({"ph": "X", "name": 42, "cat": 7, "ts": "5", "dur": [], "pid": 1, "tid": 1},
     lambda e: e["name"].astype(str).tolist() == ["42"] and e["dur"].tolist() == [0.0]),
    ({"ph": "X", "name": "a", "ts": "soon", "pid": 1, "tid": 1}, lambda e: len(e) == 0),
    ({"ph": ["X"], "name": "a", "ts": 5, "pid": 1, "tid": 1}, lambda e: len(e) == 0),
    ({"ph": "X", "name": "a", "ts": 5, "dur": 1, "pid": 1, "tid": 1, "args": 5}, lambda e: len(e) == 1),
])
def test_wrong_types_per_field_are_tolerated(tmp_path, event, check):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"traceEvents": [event, op("aten::add", 100, 1)]}))
    result = _load_or_error(path)
    if isinstance(result, TraceError):  # a value no reading can use: one error line is the right answer
        assert "not a Kineto trace" in str(result)
        return
    assert check(result.events[result.events["name"].astype(str) != "aten::add"])


def test_non_regular_files_are_refused(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(TraceError, match="not a regular file"):
        load_trace(fifo)
    with pytest.raises(TraceError, match="not a regular file"):
        load_trace("/dev/zero")
    with pytest.raises(TraceError, match="no such trace"):
        load_trace(tmp_path / "missing.json")


def test_decompressed_size_is_capped(tmp_path):
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (4 << 20) + b"]}"))
    with pytest.raises(TraceError, match=r"more than 1,048,576 bytes \(1.0 MiB\) of trace data"):
        decode(bomb, max_bytes=1 << 20)
    assert decode(bomb).events == 0


def test_whitespace_padding_costs_no_memory(tmp_path):
    """A gzip of 64 MiB of spaces between events and metadata: blocks of blanks past a 1 MiB run are dropped as
    they are read, so the trace decodes with the events and metadata it has, holding a megabyte, not 64."""
    from synchunt.trace.source import MAX_BLANK_RUN, ByteStream

    events = b'{"ph": "X", "cat": "cpu_op", "name": "aten::nonzero", "pid": 1, "tid": 1, "ts": 5, "dur": 2}'
    members = [gzip.compress(b'{"traceEvents": [' + events + b"],")]
    members += [gzip.compress(b" " * (1 << 20))] * 64  # one member per MiB: blocks of blanks only
    members.append(gzip.compress(b' "distributedInfo": {"rank": 3}}'))
    padded = tmp_path / "padded.json.gz"
    padded.write_bytes(b"".join(members))
    kept = sum(len(block) for block in ByteStream(padded))
    assert kept < MAX_BLANK_RUN + (2 << 20), f"{kept:,} bytes passed on"
    trace = load_trace(padded)
    assert trace.events["name"].astype(str).tolist() == ["aten::nonzero"] and trace.rank == 3


def _whole_events(data: bytes) -> list[dict]:
    """The events complete in a cut file, found with the standard library's incremental decoder."""
    text = data.decode()
    position = text.index("[", text.index('"traceEvents"')) + 1
    decoder = json.JSONDecoder()
    events = []
    while True:
        position = len(text) - len(text[position:].lstrip(" \n,"))
        try:
            event, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            return events
        events.append(event)


@pytest.mark.parametrize("writer", [kineto_layout, one_line])
@pytest.mark.parametrize("fraction", [0.13, 0.5, 0.77, 0.999])
def test_cut_trace_keeps_the_events_before_the_cut(tmp_path, writer, fraction):
    events = many_events(200)
    data = writer(events, distributedInfo={"rank": 1})
    cut = int(len(data) * fraction)
    path = tmp_path / "cut.json"
    path.write_bytes(data[:cut])
    trace = load_trace(path)
    assert trace.partial is not None and trace.partial.bytes_read == cut
    # Every event whose text ends before the cut is kept, in order, and nothing else.
    before_cut = [e["name"] for e in _whole_events(data[:cut]) if e["ph"] == "X"]
    assert trace.events["name"].astype(str).tolist() == before_cut
    assert trace.rank == 1
    assert synchunt.analyze(trace).summary["syncs"] >= 0


@pytest.mark.parametrize("fraction", [0.3, 0.9])
def test_cut_gzip_stream_is_partial(tmp_path, fraction):
    data = gzip.compress(kineto_layout(many_events(300)))
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[:int(len(data) * fraction)])
    trace = load_trace(path)
    assert trace.partial is not None and "gzip" in trace.partial.reason
    assert 0 < len(trace.events) < 900


def test_complete_trace_is_not_partial(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(10)))
    assert load_trace(path).partial is None
