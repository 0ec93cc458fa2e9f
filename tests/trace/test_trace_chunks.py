"""Slicing the event array at Kineto's event boundaries, and the one-shot fallback when the layout differs."""

from __future__ import annotations

import gzip
import json

import msgspec
import numpy as np
import pandas as pd
import pytest

from synchunt.trace.chunks import EventSplitter
from synchunt.trace.decode import _one_shot, decode
from synchunt.trace.model import build
from tests.trace.conftest import kineto_layout, many_events, one_line


def _frame(path, **options):
    decoded = decode(path, **options)
    return build(path, decoded), decoded.layout


def assert_same_events(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    for column in a.columns:
        left, right = a[column].astype(object).tolist(), b[column].astype(object).tolist()
        norm = [[None if (isinstance(v, float) and np.isnan(v)) else v for v in side] for side in (left, right)]
        assert norm[0] == norm[1], column


def test_torch_layout_is_sliced_and_equals_the_one_shot_decode(torch_trace):
    sliced, layout = _frame(torch_trace, slice_bytes=4096)
    assert layout == "lines"
    whole = build(torch_trace, _one_shot(torch_trace, torch_trace.read_bytes()))
    assert len(sliced.events) > 500
    assert_same_events(sliced.events, whole.events)
    assert sliced.threads.equals(whole.threads) and sliced.metadata == whole.metadata
    assert sliced.metadata["with_stack"] == 1 and "traceName" in sliced.metadata  # tail after the array


def test_splitter_cuts_only_at_event_starts(torch_trace):
    data = torch_trace.read_bytes()
    splitter = EventSplitter(slice_bytes=2048)
    slices = []
    for start in range(0, len(data), 1000):  # blocks that cut events anywhere
        slices += splitter.feed(data[start:start + 1000])
    ending = splitter.finish()
    slices += ending.slices
    assert splitter.boundary == b"\n  {" and len(slices) > 20
    counts = [len(json.loads(s)) for s in slices]  # every slice is a JSON array of whole events
    assert sum(counts) == len(json.loads(data)["traceEvents"])
    assert json.loads(splitter.head + b"[]" + ending.tail)["traceEvents"] == []


def test_a_slice_still_read_in_place_neither_stops_the_splitter_nor_changes(torch_trace):
    """A consumer that keeps reading a slice in place past the next one (a frame holding decoded values, kept
    by a sampling profiler): the splitter goes on in a copy of its buffer, every slice comes out the same, and
    the kept slice is not written over."""
    data = torch_trace.read_bytes()
    blocks = [data[start:start + 1000] for start in range(0, len(data), 1000)]
    plain = EventSplitter(slice_bytes=2048)
    expected = [s for block in blocks for s in plain.feed(block)]
    splitter = EventSplitter(slice_bytes=2048)
    held, seen = [], []
    for block in blocks:
        for view in splitter.views(block):
            seen.append(bytes(view))
            if len(held) < 3:  # an array over the slice's bytes, and msgspec values that read the view itself
                raw = msgspec.json.decode(view, type=list[msgspec.Raw])
                held.append((np.frombuffer(view, dtype=np.uint8), raw, seen[-1]))
    assert seen == expected and len(seen) > 20
    for array, raw, copy in held:
        assert array.tobytes() == copy and [json.loads(bytes(r)) for r in raw] == json.loads(copy)


@pytest.mark.parametrize("writer, layout", [(kineto_layout, "lines"), (one_line, "whole")])
def test_layouts_give_identical_columns(tmp_path, writer, layout):
    events = many_events(400)
    reference_path = tmp_path / "r.json"
    reference = build(reference_path, _one_shot(reference_path, one_line(events, distributedInfo={"rank": 3})))
    path = tmp_path / "t.json"
    path.write_bytes(writer(events, distributedInfo={"rank": 3}))
    trace, found = _frame(path, slice_bytes=1024)
    assert found == layout
    assert_same_events(trace.events, reference.events)
    assert trace.rank == 3 and trace.threads["name"].tolist() == ["thread 1", "thread 2"]


def test_foreign_layout_falls_back_to_one_shot(tmp_path):
    # A nested object at the events' indent: the slices do not decode, so the file is decoded whole.
    events = many_events(50)
    text = kineto_layout(events).decode()
    text = text.replace('"args": {"External id": 0}', '"args": {"External id": 0, "x": [\n  {"a": 1}]}', 1)
    path = tmp_path / "t.json"
    path.write_text(text)
    trace, layout = _frame(path, slice_bytes=256)
    assert layout == "one-shot"
    assert len(trace.events) == 150


def test_gzip_is_streamed_with_the_same_result(tmp_path):
    data = kineto_layout(many_events(300))
    plain, packed = tmp_path / "t.json", tmp_path / "t.json.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    a, _ = _frame(plain, slice_bytes=2048)
    b, layout = _frame(packed, slice_bytes=2048)
    assert layout == "lines"
    assert_same_events(a.events, b.events)


def test_multi_member_gzip(tmp_path):
    data = kineto_layout(many_events(100))
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(data[:5000]) + gzip.compress(data[5000:]))
    trace, _ = _frame(path)
    assert len(trace.events) == 300 and trace.partial is None


def test_bare_event_array_is_the_event_list(tmp_path):
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(many_events(20), indent=1))
    trace, layout = _frame(path, slice_bytes=512)
    assert layout == "lines" and len(trace.events) == 60 and trace.metadata == {}


def test_string_ids_and_loose_types_per_slice(tmp_path):
    events = many_events(40)
    events[5]["ts"] = str(events[5]["ts"])  # one slice needs the loose decoder, the others stay fast
    events[8]["pid"] = "Spans"
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(events))
    trace, _ = _frame(path, slice_bytes=300)
    reference = build(path, _one_shot(path, path.read_bytes()))
    assert_same_events(trace.events, reference.events)
    assert "Spans" in trace.events["pid"].tolist() and trace.events["pid"].dtype == object


def _dumped(indent, separators=None):
    def write(events, **top):
        return json.dumps({"schemaVersion": 1, **top, "traceEvents": events, "traceName": "t.json"}, indent=indent,
                          separators=separators).encode()
    return write


# Each layout the splitter meets: Kineto's, json.dumps at several indents, one line with and without spaces.
LAYOUTS = {"kineto": (kineto_layout, "lines"), "indent 1": (_dumped(1), "lines"), "indent 2": (_dumped(2), "lines"),
           "indent 4": (_dumped(4), "lines"), "tab": (_dumped("\t"), "lines"), "one line": (one_line, "whole"),
           "compact": (_dumped(None, (",", ":")), "whole")}


def _rows(frame: pd.DataFrame) -> list[tuple]:
    return [tuple(None if isinstance(v, float) and np.isnan(v) else v for v in row)
            for row in frame.astype(object).itertuples(index=False)]


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_every_layout_whole_and_cut_gives_the_one_shot_columns(tmp_path, name):
    """Whole, a layout decodes to the one-shot columns; cut mid-write (at 30 % and 70 % of the file), it keeps a
    prefix of them: every event before the cut but at most the one the cut falls in, never a misread one."""
    writer, layout = LAYOUTS[name]
    events = many_events(300)
    data = writer(events, distributedInfo={"rank": 2})
    path = tmp_path / "t.json"
    path.write_bytes(data)
    reference = build(path, _one_shot(path, data))
    trace, found = _frame(path, slice_bytes=2048)
    assert found == layout and trace.rank == 2 and trace.partial is None
    assert_same_events(trace.events, reference.events)
    expected = _rows(reference.events)
    for fraction in (0.3, 0.7):
        cut = int(len(data) * fraction)
        path.write_bytes(data[:cut])
        partial, _ = _frame(path, slice_bytes=2048)
        kept = _rows(partial.events)
        assert partial.partial is not None and 0 < len(kept) < len(expected)
        assert kept == expected[:len(kept)], "a cut file must keep a prefix of the events"
        # events are of about one size: those wholly before the cut are about that share of them, all kept
        assert len(kept) >= int(fraction * len(expected)) - 6
