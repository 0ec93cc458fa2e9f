"""Serial, local-pool and dask executors give the same results, in input order and merged with their rank."""

from __future__ import annotations

import functools
import io
import subprocess
import sys

import pytest

import synchunt
from synchunt.errors import TraceError, UsageError
from synchunt.executor import ExecutorSpec, make_executor
from synchunt.progress import NULL_PROGRESS, RichProgress
from synchunt.trace import LoadOptions, load_trace, load_traces, map_traces
from synchunt.trace import load as load_module
from tests.trace.conftest import kineto_layout, many_events
from tests.trace.test_trace_chunks import assert_same_events


def _square(x: int) -> int:
    return x * x


def _summary(trace) -> tuple:
    return trace.rank, len(trace.events), synchunt.analyze(trace).to_json()["summary"]


@pytest.fixture
def rank_folder(tmp_path):
    folder = tmp_path / "ranks"
    folder.mkdir()
    for rank in (3, 0, 2, 1):
        (folder / f"worker{rank}.json").write_bytes(kineto_layout(many_events(40 + 10 * rank),
                                                                  distributedInfo={"rank": rank}))
    return folder


@pytest.mark.parametrize("spec", [ExecutorSpec(), ExecutorSpec("local", workers=2)])
def test_executors_map_in_input_order(spec):
    with make_executor(spec) as pool:
        assert pool.map(_square, range(20)) == [x * x for x in range(20)]
        assert list(pool.imap(_square, iter(range(7)), window=2)) == [x * x for x in range(7)]


def test_bad_executor_settings_are_usage_errors():
    with pytest.raises(UsageError):
        ExecutorSpec("threads")
    with pytest.raises(UsageError):
        ExecutorSpec("local", workers=0)


def test_rank_folder_serial_equals_local_pool(rank_folder):
    serial = map_traces([rank_folder], _summary)
    pooled = map_traces([rank_folder], _summary, LoadOptions(executor=ExecutorSpec("local", workers=2), cache=False))
    assert [r[0] for r in serial] == [0, 1, 2, 3]
    assert pooled == serial
    traces = load_traces([rank_folder], LoadOptions(executor=ExecutorSpec("local", workers=2), cache=False))
    assert [t.rank for t in traces] == [0, 1, 2, 3]
    assert_same_events(traces[2].events, load_trace(rank_folder / "worker2.json").events)


def test_worker_errors_come_back_as_trace_errors(tmp_path):
    (tmp_path / "a.json").write_bytes(kineto_layout(many_events(3)))
    (tmp_path / "b.json").write_text("{not json")
    with pytest.raises(TraceError, match=r"b\.json"):
        map_traces([tmp_path], _summary, LoadOptions(executor=ExecutorSpec("local", workers=2), cache=False))


def test_big_file_decoded_in_slices_by_workers(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_bytes(kineto_layout(many_events(3000)))
    monkeypatch.setattr(load_module, "PARALLEL_DECODE_BYTES", 0)
    from synchunt.trace import decode as decode_module

    monkeypatch.setattr(decode_module, "SLICE_BYTES", 16 << 10)
    original = decode_module.decode
    # load imports decode on a miss: the patched one
    monkeypatch.setattr(decode_module, "decode", functools.partial(original, slice_bytes=16 << 10))
    pooled = load_trace(path, LoadOptions(executor=ExecutorSpec("local", workers=2), cache=False))
    assert_same_events(pooled.events, load_trace(path).events)


@pytest.mark.slow  # starting a LocalCluster takes about 10 s on two cores
def test_dask_local_cluster_gives_identical_results(rank_folder):
    distributed = pytest.importorskip("distributed")
    serial = map_traces([rank_folder], _summary)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        options = LoadOptions(executor=ExecutorSpec("dask", workers=2, scheduler=cluster.scheduler_address),
                              cache=False)
        assert map_traces([rank_folder], _summary, options) == serial


def test_progress_is_silent_when_not_a_terminal(rank_folder):
    sink = io.StringIO()
    progress = RichProgress(sink)
    assert not progress.enabled
    map_traces([rank_folder], _summary, LoadOptions(cache=False, progress=progress))
    load_trace(rank_folder / "worker1.json", LoadOptions(cache=False, progress=progress))
    assert sink.getvalue() == ""


def test_progress_draws_when_enabled(rank_folder):
    sink = io.StringIO()
    progress = RichProgress(sink, enabled=True, min_interval=0)
    map_traces([rank_folder], _summary, LoadOptions(cache=False, progress=progress))
    assert "load traces" in sink.getvalue()
    with NULL_PROGRESS.task("nothing", total=1) as task:
        task.advance()


def test_import_keeps_heavy_modules_out():
    code = ("import sys, pandas; before = 'pyarrow' in sys.modules; import synchunt.trace, synchunt.executor, "
            "synchunt.progress; heavy = [m for m in ('torch', 'dask', 'distributed') if m in sys.modules]; "
            "print(heavy, before or 'pyarrow' not in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True"
