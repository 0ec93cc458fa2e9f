"""Profiling one's own package as a new user would: real CPU captures of ``myserve`` outside the repository.

``myserve/sched.py`` and ``myserve/queue.py`` are named like standard-library modules on purpose; the package
has five sync pitfalls (``.item()``, a boolean mask, ``torch.unique``, a tensor as a bool, ``.tolist()``) and two
sync-free functions.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import synchunt
from synchunt.capture import CaptureSettings, capture, resolve_target
from synchunt.cli.report import default_report_path
from tests.capture.synchunt_process import run_synchunt

FIXTURES = Path(__file__).parent / "fixtures"
TRACE_PITFALLS = {"maybe_evict", "pick_ready", "dedupe", "should_flush"}  # what a CPU trace shows
SYNC_FREE = {"advance", "next_lengths"}


def _line_of(text: str) -> int:
    source = (FIXTURES / "myserve" / "sched.py").read_text().splitlines()
    return next(n for n, line in enumerate(source, start=1) if text in line)


def _meta(trace: Path) -> dict[str, Any]:
    with gzip.open(trace) as handle:
        return json.loads(handle.read())["synchunt"]


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("user")
    shutil.copytree(FIXTURES / "myserve", root / "myserve")
    (root.parent / "elsewhere").mkdir(exist_ok=True)
    return root


@pytest.fixture(scope="module")
def both_forms(user_dir: Path) -> dict[str, dict[str, Any]]:
    """The same step profiled as a module (from the package's parent) and as a file (from another folder)."""
    runs = {}
    for form, spec, cwd in [("module", "myserve.sched:step", user_dir),
                            ("file", f"{user_dir}/myserve/sched.py:step", user_dir.parent / "elsewhere")]:
        out = user_dir.parent / f"traces-{form}"
        proc = run_synchunt("profile", spec, "--setup", "make_state", "--n", "16", "--out", str(out), "--format",
                         "json", cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        (trace,) = out.glob("*.pt.trace.json.gz")
        runs[form] = {"analysis": json.loads(proc.stdout), "trace": trace, "stderr": proc.stderr, "out": out}
    return runs


def _sites(analysis: dict[str, Any]) -> set[tuple[str, int, str]]:
    return {(s["call_site"]["file"], s["call_site"]["line"], s["call_site"]["function"]) for s in analysis["syncs"]}


def test_every_trace_sync_has_a_user_call_site(both_forms: dict[str, dict[str, Any]]) -> None:
    for run in both_forms.values():
        syncs = run["analysis"]["syncs"]
        sites = _sites(run["analysis"])
        assert {file for file, _, _ in sites} == {"myserve/sched.py"}
        assert {s["call_site"]["function"] for s in syncs if "trace" in s["signals"]} == TRACE_PITFALLS
        assert not SYNC_FREE & {function for _, _, function in sites}


def test_the_analysis_merges_the_guard_pass_with_exact_lines(both_forms: dict[str, dict[str, Any]]) -> None:
    """What the trace saw gets the guard's exact line; what only the guard saw (``.tolist()``) is added."""
    syncs = both_forms["module"]["analysis"]["syncs"]
    by_function = {s["call_site"]["function"]: s for s in syncs}
    evict = by_function["maybe_evict"]
    assert evict["signals"] == ["trace", "guard"] and evict["call_site"]["line_source"] == "runtime"
    site = evict["call_site"]
    assert site["line"] == _line_of(".item()") and site["def_line"] < site["line"]
    tolist = by_function["report"]
    assert tolist["signals"] == ["guard"] and tolist["rule"] == "SH201"
    assert tolist["call_site"]["line"] == _line_of(".tolist()") and tolist["stall_us"] == 0.0
    assert len(syncs) == 5 and all(s["call_site"]["line_source"] == "runtime" for s in syncs)


def test_both_target_forms_name_files_the_same(both_forms: dict[str, dict[str, Any]]) -> None:
    assert _sites(both_forms["module"]["analysis"]) == _sites(both_forms["file"]["analysis"])
    compared = run_synchunt("compare", str(both_forms["module"]["trace"]), str(both_forms["file"]["trace"]),
                         cwd=both_forms["module"]["out"])
    assert compared.returncode == 0, compared.stderr
    assert not re.search(r"\b(gone|new)\b", compared.stdout), compared.stdout


def test_trace_and_thread_are_named_after_the_target(both_forms: dict[str, dict[str, Any]]) -> None:
    for run in both_forms.values():
        assert run["trace"].name.startswith("myserve.sched.step-")
        assert {s["thread"]["name"] for s in run["analysis"]["syncs"]} == {"myserve.sched:step"}
        meta = _meta(run["trace"])
        assert meta["target"] == meta["title"] == "myserve.sched:step" and meta["params"] == {"n": 16}


def test_the_source_map_counts_stdlib_named_files_as_the_users(both_forms: dict[str, dict[str, Any]]) -> None:
    meta = _meta(both_forms["file"]["trace"])
    files = meta["sources"]["user_files"]
    assert files["myserve/sched.py"] == "myserve.sched" and files["myserve/queue.py"] == "myserve.queue"
    assert not any(name.startswith(("torch/", "synchunt/")) for name in files)
    kinds = {entry["kind"] for entry in meta["sources"]["search_path"]}
    assert {"stdlib", "site-packages"} <= kinds


def test_the_guard_pass_finds_what_the_cpu_trace_cannot(both_forms: dict[str, dict[str, Any]]) -> None:
    meta = _meta(both_forms["module"]["trace"])
    records = meta["guard"]["records"]
    assert meta["guard"]["error"] is None and meta["guard"]["iterations"] == 1
    by_function = {r["function"]: r for r in records}
    assert set(by_function) == TRACE_PITFALLS | {"report"}
    tolist = by_function["report"]
    assert (tolist["file"], tolist["line"]) == ("myserve/sched.py", _line_of(".tolist()"))
    assert by_function["maybe_evict"]["line"] == _line_of(".item()")  # the exact line, not the def line
    assert all(r["file"] == "myserve/sched.py" and r["stack"][0]["file"] == "myserve/sched.py" for r in records)
    assert all(r["count"] == 1 and r["thread"] == "myserve.sched:step" and r["latent"] for r in records)
    assert "guard: 5 syncs at 5 lines over 1 step" in both_forms["module"]["stderr"]


def test_profile_leaves_the_report_commands_default_output_free(both_forms: dict[str, dict[str, Any]]) -> None:
    run = both_forms["module"]
    trace = run["trace"]
    profiled_report = trace.with_name(trace.name.replace(".pt.trace.json.gz", ".profile.html"))
    assert profiled_report.is_file() and f"report: {profiled_report}" in run["stderr"]
    assert not default_report_path(trace).exists()
    reported = run_synchunt("report", str(trace), cwd=run["out"])
    assert reported.returncode == 0, reported.stderr
    assert default_report_path(trace).is_file()


@pytest.mark.filterwarnings("ignore:CUDA is not available, disabling CUDA profiling")
def test_cuda_device_records_cuda_activities_for_a_step_without_parameters(
        user_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torch import profiler

    from synchunt.capture import profiler as profiler_module

    requested: list[Any] = []
    real_profile = profiler.profile

    def spy(*args: Any, **kwargs: Any) -> Any:
        requested.append(kwargs["activities"])
        return real_profile(*args, **kwargs)

    monkeypatch.chdir(user_dir)
    monkeypatch.syspath_prepend(str(user_dir))
    target = resolve_target("myserve.sched:tick", device="cuda")
    assert target.device == "cuda" and target.params == {}
    # No GPU here: let the capture past its CUDA check and look at what it asks the profiler to record.
    monkeypatch.setattr(profiler_module, "cuda_available", lambda _torch: True)
    monkeypatch.setattr(profiler, "profile", spy)
    captured = capture(target, tmp_path, CaptureSettings(guard=False))
    assert requested == [[profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.CUDA]]
    assert captured.metadata["activities"] == ["cpu", "cuda"] and captured.metadata["device"] == "cuda"
    assert "guard" not in captured.metadata and captured.guard_records == ()
    cpu = resolve_target("myserve.sched:tick")
    requested.clear()
    capture(cpu, tmp_path, CaptureSettings(guard=False))
    assert requested == [[profiler.ProfilerActivity.CPU]]


def test_cuda_without_cuda_is_one_error_line_not_a_parameter_error(user_dir: Path) -> None:
    proc = run_synchunt("profile", "myserve.sched:tick", "--device", "cuda", "--no-report", "--out",
                     str(user_dir.parent / "t-cuda"), cwd=user_dir)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "error: device 'cuda' requested but torch.cuda is not available here"


def test_analysis_of_the_trace_in_process_matches_the_cli(both_forms: dict[str, dict[str, Any]]) -> None:
    result = synchunt.analyze(both_forms["module"]["trace"])
    # 4 in the trace, 1 (.tolist()) from the guard pass
    assert result.summary["syncs"] == len(both_forms["module"]["analysis"]["syncs"]) == 5
