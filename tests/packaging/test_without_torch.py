"""The analysis commands work where torch cannot be imported; profile says what to install; the wheel's layout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = REPO_ROOT / "traces" / "samples"
MASKED = SAMPLES / "hicache-dcp-masked-cpu.pt.trace.json.gz"
SLICED = SAMPLES / "hicache-dcp-sliced-cpu.pt.trace.json.gz"
USER_PACKAGE = REPO_ROOT / "tests" / "capture" / "fixtures" / "myserve"
# sys.modules["torch"] = None makes every `import torch` raise ImportError, as in an environment without torch.
WITHOUT_TORCH = ("import sys; sys.modules['torch'] = None; sys.argv = ['synchunt', *sys.argv[1:]]; "
                 "from synchunt.cli import main; main()")


def _without_torch(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_TORCH, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize(("args", "code", "expected"), [
    (["analyze", str(MASKED), "--format", "json"], 0, '"schema": "synchunt.analysis/3"'),
    (["gate", str(MASKED)], 1, "gate failed: 54 syncs counted"),
    (["gate", str(SLICED)], 0, ""),
    (["compare", str(MASKED), str(SLICED)], 0, "54 → 0 syncs"),
    # the package lives under tests/: linted on request, its findings cold (notes), so the exit code is 0
    (["lint", "--include-tests", str(USER_PACKAGE)], 0, "SH201"),
    (["rules", "SH101"], 0, "SH101"),
    (["--version"], 0, "synchunt "),
], ids=["analyze", "gate-fails", "gate-passes", "compare", "lint", "rules", "version"])
def test_analysis_commands_never_import_torch(tmp_path: Path, args: list[str], code: int, expected: str) -> None:
    proc = _without_torch(*args, cwd=tmp_path)
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert expected in proc.stdout + proc.stderr


def test_report_without_torch(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    proc = _without_torch("report", str(MASKED), "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().lstrip().lower().startswith("<!doctype html")


def test_profile_without_torch_is_one_error_line(tmp_path: Path) -> None:
    proc = _without_torch("profile", "hicache-dcp", "--small", "--out", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and "pip install 'synchunt[torch]'" in proc.stderr


def _pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def test_torch_is_an_extra_not_a_dependency() -> None:
    project = _pyproject()["project"]
    assert not any(dep.split(">")[0].split("=")[0].strip() == "torch" for dep in project["dependencies"])
    assert project["optional-dependencies"]["torch"] == ["torch>=2.13"]
    from synchunt.capture.profiler import OLDEST_TESTED_TORCH

    assert project["optional-dependencies"]["torch"][0].endswith(".".join(map(str, OLDEST_TESTED_TORCH)))


def test_the_package_list_names_every_package_and_no_generic_top_level() -> None:
    settings = _pyproject()["tool"]["setuptools"]
    listed = set(settings["packages"])
    mapping = settings["package-dir"]
    found = set()
    for name, folder in mapping.items():
        base = REPO_ROOT / folder
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base)
            found.add(".".join([name, *relative.parts]))
    assert listed == found
    assert {name.split(".")[0] for name in listed} == {"synchunt", "synchunt_workloads"}


def test_workloads_are_registered_through_the_entry_point_group() -> None:
    group = _pyproject()["project"]["entry-points"]["synchunt.workloads"]
    assert set(group.values()) == {"synchunt_workloads.hicache_dcp:WORKLOADS", "synchunt_workloads.paths:WORKLOADS"}
    library = REPO_ROOT / "synchunt"
    importers = [p for p in library.rglob("*.py") if "import synchunt_workloads" in p.read_text()
                 or "from synchunt_workloads" in p.read_text() or "from workloads" in p.read_text()]
    assert importers == []  # the library finds workloads through the entry points only
