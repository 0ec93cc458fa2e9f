"""The parser on the input shapes Kineto has written over the years, and on bad input."""

from __future__ import annotations

import gzip
import json
import shutil

import numpy as np
import pytest

import synchunt
from synchunt.errors import TraceError
from synchunt.trace import load_traces


def _write(path, events, **top):
    path.write_text(json.dumps({"schemaVersion": 1, **top, "traceEvents": events}))
    return path


def _op(name, ts, dur, cat="cpu_op", tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


def test_containment_tree_parent_and_depth(tmp_path):
    events = [_op("outer", 0, 100), _op("mid", 10, 50), _op("leaf", 20, 5), _op("sibling", 70, 20),
              _op("other thread", 15, 10, tid=2)]
    trace = synchunt.load_trace(_write(tmp_path / "t.json", events))
    ev = trace.events.set_index(trace.events["name"].astype(str))
    names = trace.events["name"].astype(str).tolist()
    parent_name = {n: (names[p] if p >= 0 else None) for n, p in zip(names, trace.events["parent"], strict=True)}
    assert parent_name == {"outer": None, "mid": "outer", "leaf": "mid", "sibling": "outer", "other thread": None}
    assert ev.loc["leaf", "depth"] == 2 and ev.loc["outer", "depth"] == 0


def test_integer_timestamps_tolerate_rounded_child_end(tmp_path):
    # Integer-µs traces round: a child may appear to end 1 µs after its parent.
    trace = synchunt.load_trace(_write(tmp_path / "t.json", [_op("parent", 100, 10), _op("child", 105, 6)]))
    assert trace.events["parent"].tolist() == [-1, 0]


def test_fractional_timestamps_and_adjacent_ops_are_siblings(tmp_path):
    trace = synchunt.load_trace(_write(tmp_path / "t.json", [_op("a", 100.5, 10.25), _op("b", 110.75, 3.5)]))
    assert trace.events["parent"].tolist() == [-1, -1]
    assert trace.events["ts"].dtype == np.float64


def test_legacy_categories_are_normalized(tmp_path):
    events = [_op("aten::item", 0, 50, cat="Operator"), _op("aten::_local_scalar_dense", 1, 48, cat="Operator"),
              _op("cudaMemcpyAsync", 2, 10, cat="Runtime", correlation=7),
              _op("cudaStreamSynchronize", 13, 30, cat="Runtime", correlation=8),
              {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7,
               "ts": 5, "dur": 2, "args": {"correlation": 7, "stream": 7}}]
    result = synchunt.analyze(_write(tmp_path / "legacy.json", events))
    assert set(synchunt.load_trace(tmp_path / "legacy.json").events["cat"]) == {"cpu_op", "cuda_runtime",
                                                                                  "gpu_memcpy"}
    assert len(result.syncs) == 1
    assert result.syncs.iloc[0]["rule"] == "SH109" and result.syncs.iloc[0]["direction"] == "DtoH"


def test_missing_optional_fields_and_string_ids(tmp_path):
    events = [{"ph": "X", "name": "no cat", "ts": 1, "pid": "host", "tid": "0x1f"},
              {"ph": "X", "cat": "cpu_op", "name": "aten::nonzero", "ts": 3, "dur": 1, "pid": "host", "tid": "0x1f"},
              {"ph": "i", "name": "instant", "ts": 2}, {"ph": "X", "name": "no ts"}]
    trace = synchunt.load_trace(_write(tmp_path / "t.json", events))
    assert len(trace.events) == 2
    assert trace.events["tid"].tolist() == [31, 31]
    assert len(synchunt.analyze(trace).syncs) == 1


def test_gzip_and_plain_give_the_same_events(tmp_path, hta_traces):
    source = hta_traces / "critical_path/cuda_event_sync/event_sync_trace.json.gz"
    plain = tmp_path / "plain.json"
    plain.write_bytes(gzip.decompress(source.read_bytes()))
    a, b = synchunt.load_trace(source).events, synchunt.load_trace(plain).events
    assert a["name"].astype(str).tolist() == b["name"].astype(str).tolist()
    assert np.array_equal(a["parent"].to_numpy(), b["parent"].to_numpy())


def test_directory_of_per_rank_traces(tmp_path):
    folder = tmp_path / "ranks"
    folder.mkdir()
    for rank in (1, 0):
        _write(folder / f"r{rank}.json", [_op("aten::nonzero", 0, 5)], distributedInfo={"rank": rank})
    traces = load_traces([folder])
    assert [t.rank for t in traces] == [0, 1]
    result = synchunt.analyze(folder)
    assert sorted(result.syncs["rank"]) == [0, 1]
    assert [t["rank"] for t in result.to_json()["traces"]] == [0, 1]
    with pytest.raises(TraceError, match="holds 2 traces"):
        synchunt.load_trace(folder)


def test_thread_names_from_synchunt_metadata(tmp_path):
    events = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 42, "args": {"name": "thread 42 (python)"}},
              _op("aten::nonzero", 0, 5, tid=42)]
    path = _write(tmp_path / "t.json", events, synchunt={"threads": {"42": "scheduler"}})
    trace = synchunt.load_trace(path)
    assert trace.threads.loc[0, "name"] == "scheduler" and trace.threads.loc[0, "kineto_name"].startswith("thread")
    assert synchunt.analyze(trace).syncs.iloc[0]["thread"] == "scheduler"


@pytest.mark.parametrize("content, message", [
    (b"", "not a Kineto trace"),
    (b"{not json", "not a Kineto trace"),
    (b'{"foo": 1}', "no traceEvents"),
    (b"[1, 2]", "not a Kineto trace"),
    (b"\x1f\x8b\x08garbage", "not a valid gzip"),
])
def test_bad_input_raises_one_trace_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(TraceError, match=message):
        synchunt.load_trace(path)


def test_missing_file_and_empty_folder(tmp_path):
    with pytest.raises(TraceError, match="no such trace"):
        synchunt.load_trace(tmp_path / "missing.json")
    with pytest.raises(TraceError, match="holds no"):
        load_traces([tmp_path])


def test_copied_hta_folder_loads_every_rank(tmp_path, hta_traces):
    folder = tmp_path / "copy"
    folder.mkdir()
    shutil.copy(hta_traces / "rank_non_gpu/rank_non_gpu.json.gz", folder / "a.json.gz")
    assert len(load_traces([folder])) == 1


@pytest.mark.parametrize("meta", [5, {"threads": 5}, {"threads": ["scheduler"]}, "text"])
def test_malformed_synchunt_metadata_is_ignored(tmp_path, meta):
    events = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 42, "args": {"name": "thread 42 (python)"}},
              _op("aten::nonzero", 0, 5, tid=42)]
    trace = synchunt.load_trace(_write(tmp_path / "t.json", events, synchunt=meta))
    assert synchunt.analyze(trace).syncs.iloc[0]["thread"] == "thread 42 (python)"


def test_non_finite_times_drop_the_event_and_keep_json_valid(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + json.dumps(_op("aten::nonzero", "inf", 2)) + ","
                    + json.dumps(_op("aten::nonzero", 5, "nan")) + "]}")
    result = synchunt.analyze(path)
    assert result.summary["syncs"] == 1 and result.syncs.iloc[0]["stall_us"] == 0.0
    json.loads(json.dumps(result.to_json(), allow_nan=False))
