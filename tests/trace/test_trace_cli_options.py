"""`synchunt analyze` with the load options: workers, executor, cache folder, progress."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synchunt.cli import app, main
from tests.trace.conftest import kineto_layout, many_events

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def _run(*args):
    result = CliRunner().invoke(app, ["analyze", *map(str, args), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_workers_and_cache_give_the_same_analysis(tmp_path):
    folder = tmp_path / "ranks"
    folder.mkdir()
    for rank in range(3):
        (folder / f"r{rank}.json").write_bytes(kineto_layout(many_events(30), distributedInfo={"rank": rank}))
    cache = tmp_path / "cache"
    plain = _run(folder, "--no-cache", "--no-progress")
    pooled = _run(folder, "--workers", "2", "--cache-dir", cache)
    cached = _run(folder, "--workers", "2", "--cache-dir", cache, "--thread", "thread 1")
    assert [t["rank"] for t in plain["traces"]] == [0, 1, 2]
    assert pooled == plain and plain["summary"]["syncs"] == 3 * 5
    assert len(list(cache.glob("*.columns"))) == 3
    assert cached["filters"]["thread"] == "thread 1" and cached["summary"]["syncs"] < plain["summary"]["syncs"]


def test_saved_analysis_merges_with_traces(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_bytes(kineto_layout(many_events(14), distributedInfo={"rank": 0}))
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps(_run(trace, "--no-cache")))
    merged = _run(saved, trace, "--no-cache")
    assert merged["summary"]["syncs"] == 2 * 2 and len(merged["traces"]) == 2


@pytest.mark.slow  # waits for the connection timeout (10 s)
def test_unreachable_scheduler_is_one_error_line(tmp_path, monkeypatch, capsys):
    pytest.importorskip("distributed")
    trace = tmp_path / "t.json"
    trace.write_bytes(kineto_layout(many_events(3)))
    other = tmp_path / "u.json"
    other.write_bytes(kineto_layout(many_events(3)))
    monkeypatch.setattr(sys, "argv", ["synchunt", "analyze", str(trace), str(other), "--executor", "dask",
                                      "--scheduler", "tcp://127.0.0.1:9", "--no-cache"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "cannot reach the dask scheduler" in err and "Traceback" not in err


def _in_child(tmp_path, arguments, after: str, env=None) -> str:
    """Run the CLI (`main`) with ``arguments`` in a fresh interpreter, then the code ``after``; the last line it
    wrote to stderr."""
    code = ("import gc, os, sys; from synchunt.cli import entry, main\n"
            "try:\n    main()\nexcept SystemExit as done:\n    assert not done.code, done.code\n" + after)
    done = subprocess.run([sys.executable, "-c", code, *map(str, arguments)], capture_output=True, text=True,
                          check=True, env=env, cwd=tmp_path)
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(("source", "syncs"), [(None, 6), ("GATE-three-confirmed-no-frames.json", 3)],
                         ids=["latent", "confirmed"])
def test_analyze_loads_neither_pandas_nor_other_commands(tmp_path, source, syncs):
    """The analysis path reads numpy columns: pandas, pyarrow, rich and the other commands' code stay unloaded,
    on a first run and on a cache hit; so do pydantic (typer 0.29 loads it at every start) and the process pool's
    modules (a serial run starts no pool), numpy.ma (``np.unique``, and ``np.isin`` through it, can load it: 10 ms)
    and the lint (needed only for the exact lines of call sites whose source is found: these traces have none).
    A trace with device activity goes through the confirmed detection and the impact measures too."""
    trace = tmp_path / "t.json"
    if source is None:
        trace.write_bytes(kineto_layout(many_events(40)))
    else:
        trace.write_bytes((FIXTURES / source).read_bytes())
    loaded = ("loaded = [m for m in ('pandas', 'pyarrow', 'rich', 'synchunt.cli.gate', 'synchunt.cli.audit', "
              "'synchunt.gate', 'synchunt.report', 'pydantic', 'multiprocessing', 'concurrent.futures', "
              "'numpy.ma', 'synchunt.lint') if m in sys.modules]\n"
              "print(loaded, file=sys.stderr)")
    for _ in range(2):  # the second run is a cache hit
        arguments = ["analyze", trace, "--cache-dir", tmp_path / "c", "--format", "json", "--output",
                     tmp_path / "out.json", "--force"]
        assert _in_child(tmp_path, arguments, loaded) == "[]"
    assert len(list((tmp_path / "c").glob("*.columns"))) == 1
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["syncs"] == syncs


def test_machine_output_reaches_a_text_only_stdout(monkeypatch, capsys):
    """`main()` in a caller's process with stdout replaced by a text stream (io.StringIO, a notebook's): the JSON
    document, which is rendered as bytes, is written as its text, not an internal error."""
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "argv", ["synchunt", "analyze", str(FIXTURES / "GATE-three-confirmed-no-frames.json"),
                                      "--no-cache", "--format", "json"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 0, capsys.readouterr().err
    assert json.loads(out.getvalue())["summary"]["syncs"] == 3


_HUGE_PAGE_STATE = (  # numpy's own switch returns the setting it replaces: what the import chose
    "import numpy\n"
    "core = getattr(numpy, '_core', None) or numpy.core\n"
    "print(core.multiarray._set_madvise_hugepage(False), 'NUMPY_MADVISE_HUGEPAGE' in os.environ, file=sys.stderr)")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy advises huge pages on Linux only")
@pytest.mark.parametrize(("command", "setting", "expected"), [
    (["analyze"], None, "False False"),  # a trace command: numpy without the advice, the variable gone again
    (["analyze"], "1", "True True"),  # the user's own setting is kept
    (["rules", "--format", "json"], None, "True False"),  # a command that leaves numpy as it is
])
def test_trace_commands_load_numpy_without_huge_page_advice(tmp_path, command, setting, expected):
    trace = tmp_path / "t.json"
    trace.write_bytes(kineto_layout(many_events(10)))
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if setting is not None:
        env["NUMPY_MADVISE_HUGEPAGE"] = setting
    arguments = [*command, trace, "--no-cache", "--format", "json"] if command == ["analyze"] else command
    assert _in_child(tmp_path, arguments, _HUGE_PAGE_STATE, env=env) == expected


_THREADS_STATE = "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'), file=sys.stderr)"


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts the process's threads in /proc")
@pytest.mark.parametrize(("setting", "expected"), [
    (None, "1 None"),  # OpenBLAS loaded with one thread (none beside this one), the variable gone again
    ("2", None),  # the user's own setting is kept (how many threads it gives depends on numpy's BLAS)
])
def test_trace_commands_load_numpy_with_one_openblas_thread(tmp_path, setting, expected):
    trace = tmp_path / "t.json"
    trace.write_bytes(kineto_layout(many_events(10)))
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                            "OMP_NUM_THREADS")}
    if setting is not None:
        env["OPENBLAS_NUM_THREADS"] = setting
    state = _in_child(tmp_path, ["analyze", trace, "--no-cache", "--format", "json"], _THREADS_STATE, env=env)
    if expected is None:
        assert state.split()[1] == setting
    else:
        assert state == expected


@pytest.mark.parametrize(("command", "frozen", "young_threshold"), [
    (["analyze"], True, "100000"), (["rules", "--format", "json"], False, "default")])
def test_trace_commands_run_with_fewer_collections_and_spare_the_last_one(tmp_path, command, frozen,
                                                                           young_threshold):
    """The console script runs a trace command with a high threshold for the youngest generation and ends it
    with its objects frozen (out of the interpreter's collection at exit), then puts the thresholds back; a
    command that may have run the user's code, and `main` called in process, leave the collector alone."""
    trace = tmp_path / "t.json"
    trace.write_bytes(kineto_layout(many_events(10)))
    # the interpreter's own default (700 up to Python 3.12, 2000 in 3.13) reads "default"
    then_entry = ("import synchunt.cli as cli\n"
                  "default = gc.get_threshold()\n"
                  "assert gc.get_freeze_count() == 0\n"
                  "seen, inner = [], cli.main\n"
                  "cli.main = lambda: (seen.append(gc.get_threshold()), inner())\n"
                  "try:\n    entry()\nexcept SystemExit as done:\n    assert not done.code, done.code\n"
                  "named = ['default' if t == default else str(t[0]) for t in seen]\n"
                  "print(gc.get_freeze_count() > 0, named, gc.get_threshold() == default, file=sys.stderr)")
    arguments = [*command, trace, "--no-cache", "--format", "json"] if command == ["analyze"] else command
    assert _in_child(tmp_path, arguments, then_entry) == f"{frozen} ['{young_threshold}'] True"


def test_app_has_every_command():
    names = {command.name for command in app.registered_commands}
    assert {"analyze", "annotate", "audit", "rules", "workloads", "gate", "lint", "profile", "report",
            "compare"} <= names


@pytest.mark.parametrize("command", [["analyze"], ["gate"], ["report", "-o", "r.html"], ["compare", "t.json.gz"]])
def test_max_trace_bytes_stops_a_gzip_bomb_in_every_command_that_reads_traces(tmp_path, monkeypatch, command):
    """20 MB of JSON in a 20 KB gzip: refused at the cap with the option named, whatever the command."""
    import gzip

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.json.gz").write_bytes(gzip.compress(kineto_layout(many_events(20)).replace(
        b'"traceEvents"', b'"padding": "' + b" " * 20_000_000 + b'", "traceEvents"', 1)))
    result = CliRunner().invoke(app, [command[0], "t.json.gz", *command[1:], "--max-trace-bytes", "1000000"])
    from synchunt.errors import TraceError

    assert isinstance(result.exception, TraceError) and result.exception.exit_code == 2  # main(): one error line
    assert "1,000,000 bytes" in str(result.exception)
    assert "--max-trace-bytes" in str(result.exception) and not (tmp_path / "r.html").exists()
    # Under the cap, the same trace is read.
    within = CliRunner().invoke(app, [command[0], "t.json.gz", *command[1:], "--max-trace-bytes", "30000000"])
    assert within.exit_code in (0, 1), within.output
