"""Real third-party code: the instrument finds the truth's syncs, and `synchunt profile` agrees at the exact line.

Runs on what installs here: transformers (tiny Llama, greedy generate) and diffusers (Euler scheduler loop); each
test skips with the reason when its library is absent (install the `realclients` extra). torchvision's targets
are covered by benchmarks/real_clients.py only (torchvision does not install beside CI's torch).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRUTH = REPO / "benchmarks" / "real_clients" / "truth"


def _truth(name: str) -> dict:
    return json.loads((TRUTH / f"{name}.json").read_text())


def _lines(syncs: list[dict], path: str) -> Counter:
    return Counter({(s["site"], s["via"], s["kind"]): s[path] for s in syncs if s[path]})


def _versions_match(truth: dict, *packages: str) -> None:
    from importlib.metadata import version

    for package in packages:
        if version(package) != truth["versions"][package]:
            pytest.skip(f"the truth's lines are {package} {truth['versions'][package]}'s; "
                        f"{version(package)} is installed (install the realclients extra)")


@pytest.fixture(scope="module")
def llama_truth() -> dict:
    pytest.importorskip("transformers", reason="transformers is not installed (the realclients extra)")
    truth = _truth("hf_llama_greedy")
    _versions_match(truth, "transformers")
    return truth


def test_instrument_finds_the_truth_of_greedy_generate(llama_truth: dict) -> None:
    import make_truth

    fresh = make_truth.truth_for("hf_llama_greedy", make_truth.load_review())
    assert _lines(fresh["syncs"], "cpu_path") == _lines(llama_truth["syncs"], "cpu_path")
    assert _lines(fresh["syncs"], "cuda_path") == _lines(llama_truth["syncs"], "cuda_path")


def test_greedy_generate_checks_for_a_stop_once_per_new_token(llama_truth: dict) -> None:
    source = (REPO / llama_truth["file"]).read_text()
    new_tokens = int(source.split("max_new_tokens=")[1].split(",")[0])
    stop_checks = [s for s in llama_truth["syncs"] if s["function"] == "__call__" and s["kind"] == "truthiness"]
    assert len(stop_checks) == 1 and stop_checks[0]["cpu_path"] == new_tokens


def test_scheduler_reads_of_cpu_sigmas_are_off_the_gpu_path() -> None:
    pytest.importorskip("diffusers", reason="diffusers is not installed (the realclients extra)")
    truth = _truth("df_euler")
    _versions_match(truth, "diffusers")
    import make_truth

    fresh = make_truth.truth_for("df_euler", make_truth.load_review())
    assert _lines(fresh["syncs"], "cpu_path") == _lines(truth["syncs"], "cpu_path")
    # EulerDiscreteScheduler keeps its sigmas on the CPU ("to avoid too much CPU/GPU communication"): comparing
    # them in step() syncs nothing on a GPU, while the timestep lookup (nonzero, then .item()) does.
    sigma_reads = [s for s in fresh["syncs"] if s["function"] == "step" and s["kind"] == "truthiness"]
    lookups = [s for s in fresh["syncs"] if s["function"] == "index_for_timestep"]
    assert sigma_reads and all(s["cpu_path"] > 0 and s["cuda_path"] == 0 for s in sigma_reads)
    assert {s["kind"] for s in lookups} == {"nonzero", "scalar-read"}
    assert all(s["cuda_path"] == s["cpu_path"] for s in lookups)


@pytest.fixture(scope="module")
def llama_analysis(llama_truth: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("real-clients")
    done = subprocess.run([sys.executable, "-m", "synchunt", "profile", f"{llama_truth['file']}:step", "--setup",
                           "setup", "--format", "json", "--no-report", "--out", str(out)], cwd=REPO,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.slow
def test_profile_agrees_with_the_truth_at_the_exact_line(llama_analysis: dict, llama_truth: dict) -> None:
    from line_scores import score

    result = score(llama_analysis, llama_truth)
    assert result.site.precision >= 0.95 and result.site.recall >= 0.95, (result.missed, result.extra)


@pytest.mark.slow
def test_profile_counts_each_sync_once(llama_analysis: dict, llama_truth: dict) -> None:
    assert llama_analysis["summary"]["syncs"] == llama_truth["totals"]["cpu_path"]


@pytest.mark.slow
def test_profile_names_the_users_line_for_library_syncs(llama_analysis: dict, llama_truth: dict) -> None:
    from line_scores import score

    result = score(llama_analysis, llama_truth)
    assert result.via.precision >= 0.95 and result.via.recall >= 0.95
