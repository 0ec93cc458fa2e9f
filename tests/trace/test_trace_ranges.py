"""A plain trace decoded in byte ranges, one per process, equals the streamed decode, whatever the file holds."""

from __future__ import annotations

import gzip
import itertools
import json

import numpy as np
import pytest

from synchunt.errors import TraceError
from synchunt.executor import LocalExecutor
from synchunt.trace import ranges
from synchunt.trace.chunks import EventSplitter
from synchunt.trace.decode import DecodedTrace, decode
from synchunt.trace.source import ByteStream
from tests.trace.conftest import kineto_layout, many_events, one_line

SLICE = 16 << 10


@pytest.fixture(autouse=True)
def small_ranges(monkeypatch):
    """Ranges of test-sized files: no minimum share, a window a few events long."""
    monkeypatch.setattr(ranges, "MIN_RANGE_BYTES", 0)
    monkeypatch.setattr(ranges, "WINDOW_BYTES", 4096)


@pytest.fixture(scope="module")
def pools():
    with LocalExecutor(1) as one, LocalExecutor(2) as two:
        yield {1: one, 2: two}


def assert_same(a: DecodedTrace, b: DecodedTrace) -> None:
    assert (a.events, a.threads, a.metadata, a.partial) == (b.events, b.threads, b.metadata, b.partial)
    assert a.columns.keys() == b.columns.keys()
    for key, left in a.columns.items():
        right = b.columns[key]
        if isinstance(left, np.ndarray):
            assert np.array_equal(left, right, equal_nan=left.dtype.kind == "f"), key
        else:
            assert np.array_equal(left[0], right[0]) and left[1] == right[1], key


@pytest.mark.parametrize("workers", [1, 2])
def test_ranges_equal_the_streamed_decode(tmp_path, pools, workers):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(3000), distributedInfo={"rank": 5}))
    streamed = decode(path, slice_bytes=SLICE)
    ranged = decode(path, slice_bytes=SLICE, pool=pools[workers])
    assert ranged.layout == "ranges" and streamed.layout == "lines"
    assert_same(streamed, ranged)
    assert ranged.metadata["distributedInfo"] == {"rank": 5} and ranged.metadata["traceName"] == "t.json"


@pytest.mark.parametrize("keep", [0.3, 0.75, 0.9995])
def test_a_trace_cut_mid_write_keeps_the_same_events(tmp_path, pools, keep):
    data = kineto_layout(many_events(2000))
    path = tmp_path / "cut.json"
    path.write_bytes(data[:int(len(data) * keep)])
    streamed = decode(path, slice_bytes=SLICE)
    ranged = decode(path, slice_bytes=SLICE, pool=pools[1])
    assert streamed.partial is not None and ranged.layout == "ranges"
    assert_same(streamed, ranged)


def test_loose_values_in_a_workers_range_decode_as_when_streamed(tmp_path, pools):
    events = many_events(2000)
    events[50]["ts"] = "5000.5"  # a string for a number: the slice is decoded with the loose shapes
    events[51]["args"]["External id"] = "0x10"
    path = tmp_path / "loose.json"
    path.write_bytes(kineto_layout(events))
    assert_same(decode(path, slice_bytes=SLICE), decode(path, slice_bytes=SLICE, pool=pools[2]))


def test_a_range_that_is_not_json_fails_as_the_streamed_decode_does(tmp_path, pools):
    data = kineto_layout(many_events(2000))
    at = data.index(b"\n  {", len(data) // 5)  # an event start in the first worker's range
    broken = data[:at] + b'\n  {"ph": oops},' + data[at:]
    path = tmp_path / "broken.json"
    path.write_bytes(broken)
    with pytest.raises(TraceError) as streamed:
        decode(path, slice_bytes=SLICE)
    with pytest.raises(TraceError) as ranged:
        decode(path, slice_bytes=SLICE, pool=pools[1])
    assert str(ranged.value) == str(streamed.value) and "not a Kineto trace" in str(ranged.value)


def test_files_that_cannot_be_cut_are_streamed(tmp_path, pools, monkeypatch):
    events = many_events(2000)
    packed = tmp_path / "gz.json.gz"
    packed.write_bytes(gzip.compress(kineto_layout(events)))
    line = tmp_path / "line.json"
    line.write_bytes(one_line(events))
    bare = tmp_path / "bare.json"
    bare.write_bytes(b"[\n  " + b",\n  ".join(json.dumps(e).encode() for e in events) + b"\n]\n")
    reference = decode(line)
    for path, layout in ((packed, "lines"), (line, "whole"), (bare, "lines")):
        got = decode(path, slice_bytes=SLICE, pool=pools[1])
        assert got.layout == layout, path.name
        assert got.events == reference.events and np.array_equal(got.columns["ts"], reference.columns["ts"])
    plain = tmp_path / "plain.json"
    plain.write_bytes(kineto_layout(events))
    monkeypatch.setattr(ranges, "WINDOW_BYTES", 64)  # no event start within reach of a cut
    assert decode(plain, slice_bytes=SLICE, pool=pools[1]).layout == "lines"
    monkeypatch.setattr(ranges, "MIN_RANGE_BYTES", 1 << 40)  # too small to share
    assert ranges.plan(plain, plain.stat().st_size, 2) is None


def test_the_plan_cuts_at_event_starts_and_covers_the_array(tmp_path):
    data = kineto_layout(many_events(1500))
    path = tmp_path / "t.json"
    path.write_bytes(data)
    plan = ranges.plan(path, len(data), 4)
    assert plan is not None and plan.boundary == b"\n  {" and data[:len(plan.head) + 1].endswith(b"[")
    spans = plan.ranges(len(data))
    assert len(spans) == 4 and spans[-1][1] == len(data)
    assert all(stop == start for (_, stop), (start, _) in itertools.pairwise(spans))
    assert all(data.startswith(plan.boundary, start) for start, _ in spans[1:])
    counted = sum(c.events for start, stop in spans[:-1]
                  for c in ranges.decode_range(path, start, stop, plan.boundary, slice_bytes=SLICE))
    splitter = EventSplitter.primed(plan.boundary, plan.head)
    for view in splitter.views(data[spans[-1][0]:]):
        counted += len(json.loads(bytes(view)))
    counted += sum(len(json.loads(s)) for s in splitter.finish().slices)
    assert counted == len(json.loads(data)["traceEvents"])
    assert ranges.plan(path, len(data), 1) is None


def test_a_byte_stream_reads_its_range_and_counts_file_positions(tmp_path):
    data = bytes(range(256)) * 400
    path = tmp_path / "bytes.bin"
    path.write_bytes(data)
    for reuse in (False, True):
        stream = ByteStream(path, block_bytes=1000, reuse=reuse, start=1234, stop=50_000)
        assert b"".join(bytes(block) for block in stream) == data[1234:50_000]
        assert stream.bytes_read == stream.compressed_read == 50_000
    rest = ByteStream(path, block_bytes=4096, start=100_000)
    assert b"".join(bytes(block) for block in rest) == data[100_000:]


def _read_whole(stream: ByteStream) -> bytes:
    """Every block `ByteStream.read_into` writes, joined."""
    target = bytearray(stream.block_bytes)
    blocks = []
    with memoryview(target) as view:
        while count := stream.read_into(view):
            blocks.append(bytes(view[:count]))
    return b"".join(blocks)


def test_read_into_gives_the_blocks_iterating_gives(tmp_path):
    """Plain, in a range, gzip (two members) and gzip padded with blank blocks: the same bytes and counts."""
    data = kineto_layout(many_events(300))
    plain, packed, padded = tmp_path / "t.json", tmp_path / "t.json.gz", tmp_path / "p.json.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data[:5000]) + gzip.compress(data[5000:]))
    padded.write_bytes(gzip.compress(data[:3000] + b" " * (3 << 20) + data[3000:]))
    for path, options in [(plain, {}), (plain, {"start": 1234, "stop": 20_000}), (packed, {}), (padded, {})]:
        streams = [ByteStream(path, block_bytes=64 << 10, **options) for _ in range(2)]
        assert _read_whole(streams[0]) == b"".join(bytes(block) for block in streams[1])
        assert (streams[0].bytes_read, streams[0].compressed_read) == (streams[1].bytes_read,
                                                                      streams[1].compressed_read)
    assert len(_read_whole(ByteStream(padded, block_bytes=64 << 10))) < len(data) + (2 << 20)


def test_a_splitter_reading_a_stream_cuts_as_one_fed_its_blocks(tmp_path):
    data = kineto_layout(many_events(600))
    path = tmp_path / "t.json"
    path.write_bytes(data)
    fed = EventSplitter(slice_bytes=2048)
    expected = [s for block in ByteStream(path, block_bytes=1000) for s in fed.feed(block)]
    splitter = EventSplitter(slice_bytes=2048)
    with ByteStream(path, block_bytes=1000) as stream:
        got = [bytes(view) for view in splitter.read(stream)]
    assert got == expected and len(got) > 20
    assert splitter.finish().slices == fed.finish().slices


def test_a_primed_splitter_gives_back_what_is_left_as_one_array():
    splitter = EventSplitter.primed(b"\n  {", slice_bytes=1 << 20)
    assert list(splitter.views(b'\n  {"a": 1},\n  {"b": 2},')) == []
    assert json.loads(splitter.rest()) == [{"a": 1}, {"b": 2}]
    assert EventSplitter.primed(b"\n  {").rest() is None


def test_a_spilled_range_reads_back_as_the_same_writable_columns_and_its_file_is_removed(tmp_path):
    data = kineto_layout(many_events(1500))
    path = tmp_path / "t.json"
    path.write_bytes(data)
    plan = ranges.plan(path, len(data), 2)
    start, stop = plan.ranges(len(data))[0]
    folder = tmp_path / "spill"
    folder.mkdir()
    piped = ranges.decode_range(path, start, stop, plan.boundary, slice_bytes=SLICE)
    spilled = ranges.decode_range(path, start, stop, plan.boundary, slice_bytes=SLICE, spill_to=str(folder))
    assert isinstance(spilled, ranges.Spilled) and len(list(folder.iterdir())) == 1
    back = ranges.columns_of(spilled)
    assert not list(folder.iterdir())
    assert [c.events for c in back] == [c.events for c in piped] and len(piped) > 1
    for left, right in zip(piped, back, strict=True):
        for key, array in left.numeric.items():
            assert np.array_equal(array, right.numeric[key], equal_nan=True) and right.numeric[key].flags.writeable
        for key, coded in left.coded.items():
            assert np.array_equal(coded.codes, right.coded[key].codes) and coded.values == right.coded[key].values
    gone = ranges.decode_range(path, start, stop, plan.boundary, slice_bytes=SLICE, spill_to=str(tmp_path / "no"))
    assert isinstance(gone, list) and ranges.columns_of(gone) is gone  # no folder to write to: pickled instead


def test_local_workers_spill_their_ranges_into_a_folder_that_is_removed(tmp_path, pools, monkeypatch):
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(3000)))
    spills: list[str | None] = []
    submit = pools[2].submit

    def watched(fn, *args):
        spills.append(args[-1])
        return submit(fn, *args)

    monkeypatch.setattr(pools[2], "submit", watched)
    ranged = decode(path, slice_bytes=SLICE, pool=pools[2])
    assert ranged.layout == "ranges" and len(spills) == 2
    assert all(spill is not None and spill.startswith(str(scratch)) for spill in spills)
    assert not list(scratch.iterdir())
    assert_same(decode(path, slice_bytes=SLICE), ranged)


def test_without_a_writable_temporary_folder_the_workers_pickle_their_columns(tmp_path, pools, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(3000)))
    ranged = decode(path, slice_bytes=SLICE, pool=pools[1])
    assert ranged.layout == "ranges"
    assert_same(decode(path, slice_bytes=SLICE), ranged)
