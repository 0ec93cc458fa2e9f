"""Capture → parse → detect → attribute on the HiCache workload and on user targets (CPU, latent mode)."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

import synchunt
from synchunt.capture import capture, resolve_target
from synchunt.cli import app
from synchunt.errors import TargetError, UsageError

runner = CliRunner()


def test_masked_hicache_load_has_54_latent_syncs_two_per_layer(profiled):
    path = profiled("hicache-dcp", impl="masked", device="cpu")
    trace = synchunt.load_trace(path)
    assert trace.synchunt["target"] == "hicache-dcp" and trace.synchunt["params"]["impl"] == "masked"
    assert trace.synchunt["device"] == "cpu" and trace.synchunt["torch"]
    assert "scheduler" in trace.synchunt["threads"].values()
    result = synchunt.analyze(trace)
    syncs = result.syncs
    assert result.summary["latent"] == 54 and result.summary["confirmed"] == 0
    assert set(syncs["thread"]) == {"scheduler"}
    assert all(chain[-2:] == ["aten::index", "aten::nonzero"] for chain in syncs["op_chain"])
    assert set(syncs["rule"]) == {"SH101"}
    assert len(result.call_sites) == 1
    site = result.call_sites.iloc[0]
    assert site["function"] == "dcp_kernel_indices_masked"
    assert site["file"].endswith("workloads/hicache_dcp/translate.py")
    assert site["scopes"] == {f"start_loading › layer_{i}": 2 for i in range(27)}
    assert all(stack for stack in syncs["stack"])


@pytest.mark.parametrize("options", [{"impl": "sliced"}, {"impl": "masked", "dcp_size": 1},
                                     {"impl": "sliced", "dcp_size": 1}])
def test_sync_free_variants(profiled, options):
    assert synchunt.analyze(profiled("hicache-dcp", **options)).summary["syncs"] == 0


def test_five_layers_give_ten(profiled):
    result = synchunt.analyze(profiled("hicache-dcp", impl="masked", layers=5))
    assert len(result.syncs) == 10
    assert result.filter(scope="layer_3").summary["syncs"] == 2
    assert result.filter(thread="scheduler").summary["syncs"] == 10
    with pytest.raises(UsageError, match="no thread 'nobody'") as refused:  # a typo must not read as "sync-free"
        result.filter(thread="nobody")
    names, _, ids = str(refused.value).partition("; ")[2].partition("; ")
    assert "scheduler" in names and "thread ids: " in ids and ids.removeprefix("thread ids: ").split(", ")[0].isdigit()
    with pytest.raises(UsageError, match="no scope 'layer_99'"):
        result.filter(scope="layer_99")


def test_user_script_function_is_the_call_site(tmp_path):
    script = tmp_path / "user_code.py"
    script.write_text(textwrap.dedent("""
        import torch

        def hot_path(n: int = 16):
            x = torch.arange(n)
            picked = x[x % 3 == 0]
            return picked.sum().item()
    """))
    target = resolve_target(f"{script}:hot_path", {"n": "64"})
    result = synchunt.analyze(capture(target, tmp_path / "out").path)
    assert sorted(result.syncs["rule"]) == ["SH101", "SH109"]
    assert set(result.syncs["function"]) == {"hot_path"}
    assert all(f.endswith("user_code.py") for f in result.syncs["file"])
    assert set(result.syncs["thread"]) == {"user_code:hot_path"}  # named after the target



def test_profile_cli_json_and_trace_name(tmp_path):
    out = tmp_path / "traces"
    result = runner.invoke(app, ["profile", "hicache-dcp", "--small", "--impl", "masked", "--out", str(out),
                                 "--no-report", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{"):])
    assert data["schema"] == "synchunt.analysis/3"
    assert data["summary"]["latent"] == data["summary"]["syncs"] > 0
    files = list(out.glob("hicache-dcp-masked-*.pt.trace.json.gz"))
    assert len(files) == 1


def test_profile_module_function_target_via_cli(tmp_path):
    package = tmp_path / "userpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "paths.py").write_text("import torch\n\ndef run():\n    torch.unique(torch.arange(8) % 3)\n")
    import sys
    sys.path.insert(0, str(tmp_path))
    try:
        result = runner.invoke(app, ["profile", "userpkg.paths:run", "--out", str(tmp_path / "t"), "--no-report",
                                     "--format", "json"])
    finally:
        sys.path.remove(str(tmp_path))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{"):])
    assert [s["rule"] for s in data["syncs"]] == ["SH105"]
    assert data["syncs"][0]["call_site"]["function"] == "run"


def test_bad_targets_and_options():
    with pytest.raises(TargetError, match="unknown target"):
        resolve_target("no-such-workload")
    with pytest.raises(UsageError, match="no option --colour"):
        resolve_target("hicache-dcp", {"colour": "red"})
    with pytest.raises(UsageError, match="not a valid int"):
        resolve_target("hicache-dcp", {"layers": "many"})
    with pytest.raises(TargetError, match="no such file"):
        resolve_target("missing_file.py:main")


@pytest.mark.parametrize("args", [["profile", "nope"], ["profile", "hicache-dcp", "--layers", "x"],
                                  ["analyze", "/no/such/trace.json"], ["profile", "hicache-dcp", "stray"]])
def test_cli_bad_input_exits_2_with_one_line(args):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "synchunt", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("error:")


def test_skip_package_moves_the_call_site_outward(profiled):
    path = profiled("hicache-dcp", impl="masked", layers=2)
    default = runner.invoke(app, ["analyze", str(path), "--format", "json"])
    skipped = runner.invoke(app, ["analyze", str(path), "--format", "json", "--skip-package", "workloads"])
    assert default.exit_code == skipped.exit_code == 0
    sites = {s["call_site"]["function"] for s in json.loads(default.stdout)["syncs"]}
    assert sites == {"dcp_kernel_indices_masked"}
    assert {(s["call_site"] or {}).get("function") for s in json.loads(skipped.stdout)["syncs"]} != sites


def test_saved_analysis_is_read_back_by_analyze_and_gate(tmp_path, profiled):
    path = profiled("hicache-dcp", impl="masked", layers=2)
    saved = tmp_path / "analysis.json"
    assert runner.invoke(app, ["analyze", str(path), "--format", "json", "-o", str(saved)]).exit_code == 0
    again = synchunt.analyze(saved)
    assert again.summary == synchunt.analyze(path).summary
    assert again.filter(thread="scheduler").summary["syncs"] == 4
    with pytest.raises(UsageError, match="no thread"):
        again.filter(thread="nosuch")
    with pytest.raises(UsageError, match="keeps the mode"):
        synchunt.analyze(saved, mode="confirmed")
    gate = runner.invoke(app, ["gate", str(saved)])
    assert gate.exit_code == 1 and "4 syncs counted" in gate.output


def test_target_stderr_stays_visible_and_failures_name_the_line(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "noisy.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch

        def f():
            print("from the target", file=sys.stderr)
            torch.arange(4).sum()

        def broken():
            raise ValueError("boom")
    """))
    proc = subprocess.run([sys.executable, "-m", "synchunt", "profile", f"{script}:f", "--no-report", "--out",
                           str(tmp_path / "t")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "from the target" in proc.stderr
    assert "profiler_start" not in proc.stderr  # Kineto's own start/stop lines stay out of the way
    with pytest.raises(TargetError, match=r"ValueError: boom \(at .*noisy.py:10 in broken\)"):
        capture(resolve_target(f"{script}:broken"), tmp_path / "t2")
