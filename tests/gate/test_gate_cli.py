"""`synchunt gate` on saved traces: exit codes (through the real console script, where errors become exit 2),
budgets on the real HTA traces, filters, --write-baseline round trips and every format written to a file."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synchunt.cli import app
from synchunt.errors import SynchuntError, UsageError

REPO = Path(__file__).resolve().parents[2]
SYNCHUNT = Path(sys.executable).parent / "synchunt"
runner = CliRunner()


def run_synchunt(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SYNCHUNT), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300,
                          check=False)


def gate(*args: str | Path):
    return runner.invoke(app, ["gate", *map(str, args)])


@pytest.fixture
def bad_baseline(tmp_path: Path) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text('[[allow]]\nrule = "SH101"\n')
    return path


@pytest.mark.parametrize(("args", "message"), [
    (["missing-trace.json"], "error: no such trace: missing-trace.json"),
    (["{trace}", "--max-syncs", "-1"], "error: Invalid value for '--max-syncs': "),
    (["{trace}", "--baseline", "{bad}"], "entry 1 (line 1): 'site' must be a non-empty string"),
    (["{trace}", "--baseline", "absent.toml"], "error: no such baseline: absent.toml"),
    ([], "error: give trace files to gate, or --target NAME to profile one first"),
    (["{trace}", "--impl", "sliced"], "error: no such option: --impl (workload options need --target NAME)"),
    (["{trace}", "--out", "traces"], "error: --out only applies with --target NAME"),
])
def test_unusable_input_exits_2_with_one_clear_line(event_sync_trace, bad_baseline, args, message):
    done = run_synchunt("gate", *(a.format(trace=event_sync_trace, bad=bad_baseline) for a in args))
    assert done.returncode == 2, done.stderr
    assert message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("value", ["x", "1.5"])
def test_a_non_integer_budget_is_rejected_by_the_option_parser(event_sync_trace, value):
    result = gate(event_sync_trace, "--max-syncs", value)
    assert result.exit_code == 2 and "--max-syncs" in result.output


def test_library_errors_reach_main_as_usage_errors_with_exit_code_2(event_sync_trace, bad_baseline):
    result = gate(event_sync_trace, "--baseline", bad_baseline)
    assert isinstance(result.exception, UsageError) and result.exception.exit_code == 2


@pytest.mark.parametrize(("args", "message"), [
    (["--target", "no-such-workload"], "unknown target 'no-such-workload'"),
    (["--target", "hicache-dcp", "--colour", "red"], "workload 'hicache-dcp' has no option --colour"),
    (["--target", "hicache-dcp", "--impl"], "option --impl needs a value"),
])
def test_a_target_that_cannot_be_resolved_is_exit_2(args, message):
    result = gate(*args)
    assert isinstance(result.exception, SynchuntError) and result.exception.exit_code == 2
    assert message in str(result.exception)


@pytest.mark.parametrize(("max_syncs", "exit_code"), [("0", 1), ("2", 1), ("3", 0), ("10", 0)])
def test_the_cuda_event_sync_trace_has_3_confirmed_syncs(event_sync_trace, max_syncs, exit_code):
    result = gate(event_sync_trace, "--max-syncs", max_syncs)
    assert result.exit_code == exit_code, result.output
    assert f"3 syncs counted, budget {max_syncs} (3 confirmed syncs on thread" in " ".join(result.output.split())


def test_a_real_process_exits_1_over_budget_and_0_within(event_sync_trace):
    over = run_synchunt("gate", event_sync_trace, "--format", "github")
    assert over.returncode == 1 and over.stdout.count("::error ") == 3
    assert "gate failed: 3 syncs counted, budget 0" in over.stderr
    within = run_synchunt("gate", event_sync_trace, "--max-syncs", "3")
    assert within.returncode == 0 and "gate passed: 3 syncs counted, budget 3" in " ".join(within.stdout.split())


@pytest.mark.parametrize(("trace", "mode", "counted"), [
    ("critical_path/alexnet", "auto", 36),  # 16 blocking H2D copies + 5 cudaDeviceSynchronize + 15 cudaFree
    ("critical_path/cuda_event_sync_multi_stream", "auto", 1),  # cudaDeviceSynchronize; event queries don't block
    ("rank_non_gpu", "auto", 5),  # 5 aten::item without device activity: latent
])
def test_the_other_hta_traces_gate_at_their_sync_counts(hta_traces, trace, mode, counted):
    result = gate(hta_traces / trace, "--mode", mode, "--format", "junit")
    assert result.exit_code == (1 if counted else 0), result.output
    suite = ElementTree.fromstring(result.stdout).find("testsuite")
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["counted"] == str(counted)


def test_confirmed_mode_on_a_cpu_only_trace_is_unusable_not_green(hta_traces):
    # No runtime evidence can exist in a trace without device activity: passing would check nothing.
    result = gate(hta_traces / "rank_non_gpu", "--mode", "confirmed")
    assert isinstance(result.exception, UsageError) and "no device activity" in str(result.exception)


@pytest.mark.parametrize("option", ["--thread", "--scope"])
def test_a_filter_that_matches_nothing_is_unusable_not_green(hta_traces, option):
    result = gate(hta_traces / "critical_path/cuda_event_sync", option, "no-such-name")
    assert isinstance(result.exception, UsageError) and "no-such-name" in str(result.exception)


def test_a_scope_that_encloses_no_event_is_unusable_not_green(tmp_path):
    """The annotation exists but holds nothing: a green on it would judge no code at all."""
    def event(cat, name, ts, dur):
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}}

    events = [event("user_annotation", "step", 0, 100), event("user_annotation", "outer", 10, 50),
              event("user_annotation", "inner", 20, 20), event("cpu_op", "aten::add", 25, 5),
              event("user_annotation", "idle", 200, 10), event("user_annotation", "idle-outer", 300, 30),
              event("user_annotation", "idle-inner", 305, 10)]
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    for scope in ("step", "outer", "inner"):
        assert gate(trace, "--scope", scope).exit_code == 0, scope
    for scope in ("idle", "idle-outer", "idle-inner"):
        result = gate(trace, "--scope", scope)
        assert isinstance(result.exception, UsageError), scope
        assert f"no scope {scope!r} holding events" in str(result.exception)
        assert "scopes: inner, outer, step" in str(result.exception)


@pytest.mark.parametrize(("filters", "counted"), [
    (["--thread", "scheduler"], 8), (["--thread", "948300"], 3), (["--scope", "start_loading"], 8),
    (["--scope", "layer_0"], 2), (["--mode", "confirmed"], 3), ([], 11),
])
def test_thread_scope_and_mode_narrow_what_is_gated(masked_small_trace, event_sync_trace, filters, counted):
    result = gate(masked_small_trace, event_sync_trace, "--max-syncs", str(counted), *filters)
    assert result.exit_code == 0
    assert f"gate passed: {counted} syncs counted" in " ".join(result.output.split())
    if counted:
        assert gate(masked_small_trace, event_sync_trace, "--max-syncs", str(counted - 1), *filters).exit_code == 1


def test_write_baseline_round_trip(masked_small_trace, event_sync_trace, tmp_path):
    baseline = tmp_path / "ci" / "synchunt-baseline.toml"
    written = gate(masked_small_trace, event_sync_trace, "--write-baseline", baseline)
    assert written.exit_code == 0, written.output
    assert f"baseline: wrote 4 entries to {baseline}" in " ".join(written.stderr.split())
    assert "gate passed: 0 syncs counted, budget 0; 11 allowed by the baseline" in " ".join(written.stdout.split())
    text = baseline.read_text()
    assert 'site = "workloads/hicache_dcp/translate.py:dcp_kernel_indices_masked"' in text and "max = 8" in text

    assert gate(masked_small_trace, event_sync_trace, "--baseline", baseline, "--strict").exit_code == 0
    # The CUDA syncs went away: their 3 entries are stale, which fails only a strict gate.
    assert gate(masked_small_trace, "--baseline", baseline).exit_code == 0
    strict = gate(masked_small_trace, "--baseline", baseline, "--strict", "--format", "github")
    assert strict.exit_code == 1 and strict.stdout.count("::error file=") == 3
    assert all(f"file={baseline}" in line for line in strict.stdout.splitlines())

    refused = gate(event_sync_trace, "--write-baseline", baseline)
    assert isinstance(refused.exception, UsageError) and "pass --force" in str(refused.exception)
    assert baseline.read_text() == text
    replaced = gate(event_sync_trace, "--baseline", baseline, "--write-baseline", baseline, "--force")
    assert replaced.exit_code == 0 and "wrote 3 entries" in replaced.stderr
    assert "dcp_kernel_indices_masked" not in baseline.read_text()


def test_a_refused_write_is_exit_2_in_a_real_process(event_sync_trace, tmp_path):
    baseline = tmp_path / "b.toml"
    baseline.write_text("# reviewed\n")
    done = run_synchunt("gate", event_sync_trace, "--write-baseline", baseline)
    assert done.returncode == 2 and "exists; pass --force to replace it" in done.stderr


@pytest.mark.parametrize("output_format", ["text", "github", "sarif", "junit"])
def test_every_format_can_be_written_to_a_file(event_sync_trace, tmp_path, output_format):
    output = tmp_path / "out" / f"gate.{output_format}"
    result = gate(event_sync_trace, "--format", output_format, "--output", output)
    assert result.exit_code == 1 and result.stdout == ""
    content = output.read_text()
    if output_format == "text":
        assert content.rstrip().endswith("(python3.10))") and "gate failed: 3 syncs counted" in content
    elif output_format == "github":
        assert content.count("::error file=") == 3
    elif output_format == "sarif":
        assert len(json.loads(content)["runs"][0]["results"]) == 3
    else:
        assert ElementTree.fromstring(content).get("failures") == "2"
    if output_format != "text":
        assert "gate failed: 3 syncs counted" in result.stderr


def test_an_error_quoting_a_name_with_newlines_stays_one_line(tmp_path):
    """A file name can hold a newline and a forged CI annotation: the error is still one line, starting error:."""
    done = run_synchunt("gate", "missing\n::error file=evil.py,line=1::forged.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: no such trace: missing ::error")


SCHEDULER = '''
import torch


def make_state(device="cpu"):
    return torch.arange(8, device=device)


def step(lens):
    return lens[lens > 2].sum()
'''


def test_a_function_target_takes_its_set_up_as_profile_does(tmp_path, monkeypatch):
    """`gate --target myserve.sched:step --setup make_state` (docs/profile.md): the set-up runs once, its result
    is the step's state; on the shadow device the state is on the (emulated) GPU."""
    (tmp_path / "sched.py").write_text(SCHEDULER)
    monkeypatch.chdir(tmp_path)
    failed = gate("--target", "sched:step", "--setup", "make_state")
    assert failed.exit_code == 1, failed.output
    assert "gate failed: 1 sync counted, budget 0" in " ".join(failed.output.split())
    shadow = gate("--target", "sched:step", "--setup", "make_state", "--device", "shadow-cuda")
    assert shadow.exit_code == 1 and "1 sync counted" in " ".join(shadow.output.split()), shadow.output
    alone = gate(str(tmp_path / "sched.py"), "--setup", "make_state")
    assert isinstance(alone.exception, SynchuntError) and "--setup only applies with --target" in str(alone.exception)
