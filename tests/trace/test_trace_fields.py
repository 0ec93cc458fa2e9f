"""The analysis field set: what detection and attribution read, where they read it; the same analysis."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import synchunt
from synchunt.detect import analysis_fields
from synchunt.trace import LoadOptions, load_trace
from synchunt.trace.schema import FieldSet
from synchunt.trace.table import CodedColumn, EventTable, compact, first_appearance_codes, value_mask
from tests.trace.conftest import kineto_layout, many_events, op


def _gpu_like_events() -> list[dict]:
    """Host ops launching kernels and a copy, a cuda_sync record, and a histc with its arguments."""
    events = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]
    for i in range(60):
        base = i * 100.0
        top = "0" if i % 6 == 0 else "5"  # histc syncs only when its range is empty (min == max)
        events.append(op("aten::nonzero" if i % 3 else "aten::histc", base, 80,
                         **{"Concrete Inputs": ["", "10", "0", top], "External id": i, "Input type": ["float"]}))
        events.append(op("cudaMemcpyAsync", base + 5, 20, cat="cuda_runtime", correlation=1000 + i,
                         **{"External id": i}))
        events.append(op("cudaStreamSynchronize", base + 30, 40, cat="cuda_runtime", correlation=2000 + i))
        events.append(op("Memcpy DtoH (Device -> Pageable)", base + 10, 5, cat="gpu_memcpy", pid=0, tid=7,
                         correlation=1000 + i, stream=7, bytes=4))
        events.append(op("cudaStreamSynchronize", base + 30, 40, cat="cuda_sync", pid=0, tid=7,
                         correlation=2000 + i, stream=7, cuda_sync_kind="Stream Sync"))
        events.append(op(f"model.py({i % 4}): step", base - 1, 95, cat="python_function",
                         **{"Python id": i, "Python parent id": None}))
    return events


@pytest.mark.parametrize("writer", ["kineto", "one-line"])
def test_analysis_fields_give_the_same_analysis(tmp_path, writer, torch_trace):
    path = tmp_path / "t.json"
    events = _gpu_like_events()
    path.write_bytes(kineto_layout(events) if writer == "kineto" else __import__("json").dumps(
        {"traceEvents": events}).encode())
    for source in (path, torch_trace):
        full = load_trace(source)
        narrow = load_trace(source, LoadOptions(cache=False, fields=analysis_fields()))
        for mode in ("auto", "latent"):
            assert synchunt.analyze(narrow, mode=mode).to_json() == synchunt.analyze(full, mode=mode).to_json()
        if source == path:  # confirmed and latent syncs, the latent histc ones decided by its arguments
            assert synchunt.analyze(narrow).to_json()["summary"]["confirmed"] == 60
            assert synchunt.analyze(narrow, mode="latent").to_json()["summary"]["latent"] == 40 + 10
        left_out = {"external_id", "python_id", "python_parent_id", "bytes", "input_types"}
        assert set(full.events.columns) - set(narrow.events.columns) == left_out


def test_analysis_fields_keep_arguments_only_where_they_are_read(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(_gpu_like_events()))
    full = load_trace(path).events
    narrow = load_trace(path, LoadOptions(cache=False, fields=FieldSet("analysis", frozenset({"aten::histc"}))))
    events = narrow.events
    runtime_or_device = events["cat"].isin(["cuda_runtime", "gpu_memcpy", "cuda_sync"]).to_numpy()
    assert (events["correlation"].to_numpy() == np.where(runtime_or_device, full["correlation"], -1)).all()
    assert set(events.loc[events["stream"] >= 0, "cat"]) == {"gpu_memcpy", "cuda_sync"}
    assert set(events.loc[events["sync_kind"].notna(), "cat"]) == {"cuda_sync"}
    kept = events["concrete_inputs"].notna()
    assert set(events.loc[kept, "name"]) == {"aten::histc"} and kept.sum() == 20
    assert events.loc[kept, "concrete_inputs"].iloc[0] == full.loc[kept, "concrete_inputs"].iloc[0]


def test_field_sets_are_checked_and_keyed():
    with pytest.raises(ValueError, match="unknown field set"):
        FieldSet("some")
    assert FieldSet().key == "all" and analysis_fields().key == "analysis:aten::histc,aten::one_hot"


def test_string_ids_are_one_vocabulary_entry(tmp_path):
    events = [*many_events(20), op("PyTorch Profiler (0)", 0, 1, cat="Trace", pid="Spans", tid="PyTorch Profiler"),
              op("x", 5, 1, pid="0x10", tid=" 3")]
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(events))
    trace = load_trace(path)
    pids = trace.events["pid"].tolist()
    assert pids[-2:] == ["Spans", 16] and trace.events["tid"].tolist()[-1] == 3
    codes, values = trace.table.id_codes("pid")
    assert sorted(map(str, values)) == ["1", "16", "Spans"] and len(codes) == len(pids)


def test_table_helpers():
    codes, values = first_appearance_codes(["b", "a", "b", None], 4)
    assert codes.tolist() == [0, 1, 0, 2] and values == ["b", "a", None]
    for sample in (np.array([5, 3, 5, 9]), np.array([7, -2, 7]), np.array([1 << 40, 3])):
        distinct, inverse = compact(sample)
        expected = np.unique(sample, return_inverse=True)
        assert distinct.tolist() == expected[0].tolist() and inverse.tolist() == expected[1].tolist()
    table = EventTable({"pid": CodedColumn(np.array([0, 1, 0], dtype=np.int8), np.array([4, "x"], dtype=object)),
                        "ts": np.array([1, 2, 3], dtype=np.int32)}, {}, 3)
    assert table.array("pid").tolist() == [4, "x", 4] and table.array("ts").dtype == np.float64
    assert table.id_codes("pid")[1] == [4, "x"] and table.keys == ("pid", "ts")


def test_coding_a_column_leaves_no_cycle_for_the_collector():
    """The first-appearance index is freed as soon as the codes are made: a cycle (its factory is its own
    method) held every chunk's distinct values until a collection, 10 MB on the 243 MB CPU trace with the CLI's
    rare collections."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        codes, values = first_appearance_codes(iter(["b", "a", "b"] * 1000), 3000)
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()
    assert codes[:3].tolist() == [0, 1, 0] and values == ["b", "a"]


def test_row_strings_and_membership_read_codes_with_missing_rows():
    """Per-row strings looked up on access equal the built array for an index, rows and a mask; a missing
    value (code -1) reads "nan" and is in no set of wanted values."""
    column = CodedColumn(np.array([1, -1, 0, 1, 2], dtype=np.int8), np.array(["b", "a", 7], dtype=object))
    rows = column.row_strings()
    assert column.strings().tolist() == ["a", "nan", "b", "a", "7"] and len(rows) == 5
    assert rows[1] == "nan" and rows[4] == "7"
    assert rows[np.array([2, 0])].tolist() == ["b", "a"]
    assert rows[np.array([True, False, False, True, True])].tolist() == ["a", "a", "7"]
    table = EventTable({}, {"name": column}, 5)
    assert table.is_in("name", ["a", 7, "absent"]).tolist() == [True, False, False, True, True]
    assert table.is_in("name", []).tolist() == [False] * 5


def test_value_mask_selects_the_rows_of_the_chosen_values_whatever_their_number():
    """Few chosen values are compared, many gathered: both give each row its value's answer, never for -1."""
    rng = np.random.default_rng(5)
    for dtype in (np.int8, np.int32, np.int64):
        codes = rng.integers(-1, 12, 2000).astype(dtype)
        for chosen in range(13):
            answers = np.zeros(12, dtype=bool)
            answers[rng.choice(12, chosen, replace=False)] = True
            expected = [bool(answers[c]) if c >= 0 else False for c in codes.tolist()]
            assert value_mask(codes, answers.tolist()).tolist() == expected
    assert value_mask(np.zeros(0, dtype=np.int32), [True]).tolist() == []


def _mixed_phase_events() -> list[dict]:
    """Complete events among metadata and instants that share their names, threads and categories; ids as ints,
    as strings and as numeric strings; every argument the columns read, present or absent."""
    events: list[dict] = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}}]
    for i in range(40):
        pid, tid = (1, 1) if i % 3 else ("Spans", "16" if i % 2 else 16)
        events.append({"ph": "i", "name": "aten::add", "cat": "cpu_op", "pid": pid, "tid": tid, "ts": i * 10.0})
        events.append(op("aten::add" if i % 4 else "aten::nonzero", i * 10.0, 5, pid=pid, tid=tid,
                         **{"Concrete Inputs": ["", str(i % 2)], "Input type": ["float"], "External id": i,
                            "Call stack": f"model.py({i % 5}): step"}))
        events.append(op("cudaLaunchKernel", i * 10.0 + 1, 2, cat="cuda_runtime", pid=pid, tid=tid,
                         correlation=500 + i))
        events.append(op("kernel", i * 10.0 + 2, 1, cat="kernel", pid=0, tid=7, correlation=500 + i, stream=7))
        if i % 10 == 0:
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": f"t{i}"}})
    return events


@pytest.mark.parametrize("fields", ["all", "analysis"])
def test_the_typed_reduction_is_the_checked_one(fields):
    """The fast reduction (one coding pass over each event's phase, name, category and ids) gives the columns the
    loose one (every value checked in Python) gives, on events both decode."""
    import msgspec

    from synchunt.trace import schema
    from synchunt.trace.columns import reduce_fast, reduce_loose

    payload = msgspec.json.encode(_mixed_phase_events())
    field_set = FieldSet(fields, frozenset({"aten::nonzero"}))
    fast = reduce_fast(schema.FAST_EVENTS_DECODERS[fields].decode(payload), field_set)
    loose = reduce_loose(schema.LOOSE_EVENTS_DECODER.decode(payload), field_set)
    assert fast.events == loose.events and fast.threads == loose.threads
    assert fast.threads == [("Spans", 16, "t0"), (1, 1, "t10"), (1, 1, "t20"), ("Spans", 16, "t30")]
    assert fast.rows == 120 and fast.events == 165  # the instants and metadata are no rows
    for key, values in fast.numeric.items():
        np.testing.assert_array_equal(values, loose.numeric[key], err_msg=key)
    read_everywhere = ("name", "cat", "pid", "tid", "call_stack")  # the loose reduction reads every column on every row
    for key in (k for k in fast.coded if fields == "all" or k in read_everywhere):
        assert fast.coded[key].values == loose.coded[key].values, key
        np.testing.assert_array_equal(fast.coded[key].codes, loose.coded[key].codes, err_msg=key)
    assert fast.coded["pid"].values == ["Spans", 0, 1] and fast.coded["tid"].values == [16, 7, 1]  # "16", 16: one id
    assert fast.coded["name"].values == ["aten::nonzero", "cudaLaunchKernel", "kernel", "aten::add"]
