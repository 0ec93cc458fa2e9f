"""Build the wheel, install it into a fresh virtual environment, and use it on a package outside the repository.

The fresh environment gets synchunt only from the wheel; its dependencies (torch, pandas, …) come from the test
environment's site-packages through a ``.pth`` line, so no download is needed and the run stays short. Every
command runs from a folder outside the checkout: the module form from the user package's parent, the file form
and the analysis commands from another folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
USER_PACKAGE = REPO_ROOT / "tests" / "capture" / "fixtures" / "myserve"
PITFALLS_IN_TRACE = {"maybe_evict", "pick_ready", "dedupe", "should_flush"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    _copy_sources(source)
    wheels = work / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels),
                            str(source)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("synchunt-*.whl")
    env_dir = work / "env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site_dir = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    # The test environment's packages, after the fresh environment's own (its synchunt is the wheel's).
    (site_dir / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                              "--quiet", str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    user = work / "user"
    shutil.copytree(USER_PACKAGE, user / "myserve")
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    return {"wheel": wheel, "bin": env_dir / "bin", "site": site_dir, "user": user, "elsewhere": elsewhere,
            "work": work}


def _copy_sources(target: Path) -> None:
    """The checkout's files as git sees them (tracked, and new ones it does not ignore): no .venv, no traces."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO_ROOT,
                            capture_output=True, timeout=60)
    if listed.returncode != 0:
        pytest.skip("the wheel is built from the git checkout's files, and git cannot list them here")
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _run(installed: dict[str, Path], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(installed["bin"] / "synchunt"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def _sites(analysis: dict[str, Any]) -> set[tuple[str, int, str]]:
    return {(s["call_site"]["file"], s["call_site"]["line"], s["call_site"]["function"]) for s in analysis["syncs"]}


def test_wheel_ships_synchunt_and_its_own_workloads_package(installed: dict[str, Path]) -> None:
    with zipfile.ZipFile(installed["wheel"]) as wheel:
        names = wheel.namelist()
        top = {name.split("/")[0] for name in names}
        metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = wheel.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert {t for t in top if not t.endswith(".dist-info")} == {"synchunt", "synchunt_workloads"}
    assets = {"synchunt/render/html/assets/page.html", "synchunt/render/html/assets/page.js",
              "synchunt/render/html/assets/page.css", "synchunt/render/html/assets/dom.js",
              "synchunt/render/html/assets/audit.js"}
    assert assets <= set(names)
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: torch")]
    assert requires and all("extra ==" in line for line in requires)  # torch only through the `torch` extra
    assert "[synchunt.workloads]" in entry_points and "[console_scripts]" in entry_points


def test_installed_synchunt_is_the_wheels(installed: dict[str, Path]) -> None:
    probe = subprocess.run([str(installed["bin"] / "python"), "-c",
                            "import synchunt, synchunt_workloads; print(synchunt.__file__); "
                            "print(synchunt_workloads.__file__)"],
                           cwd=installed["elsewhere"], capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr
    assert all(line.startswith(str(installed["site"])) for line in probe.stdout.split())
    version = _run(installed, "--version", cwd=installed["elsewhere"])
    assert version.returncode == 0 and re.fullmatch(r"synchunt \d+\.\d+\.\d+\S*\n", version.stdout)
    listing = _run(installed, "workloads", "--json", cwd=installed["elsewhere"])
    assert listing.returncode == 0, listing.stderr
    assert "hicache-dcp" in {w["name"] for w in json.loads(listing.stdout)}


def test_user_package_end_to_end(installed: dict[str, Path]) -> None:
    user, elsewhere, work = installed["user"], installed["elsewhere"], installed["work"]
    by_module = _run(installed, "profile", "myserve.sched:step", "--setup", "make_state", "--n", "16",
                     "--out", str(work / "t-module"), "--format", "json", cwd=user)
    assert by_module.returncode == 0, by_module.stderr
    by_file = _run(installed, "profile", "../user/myserve/sched.py:step", "--setup", "make_state", "--n", "16",
                   "--out", str(work / "t-file"), "--format", "json", cwd=elsewhere)
    assert by_file.returncode == 0, by_file.stderr
    module_sites, file_sites = _sites(json.loads(by_module.stdout)), _sites(json.loads(by_file.stdout))
    assert module_sites == file_sites
    assert {f for f, _, _ in module_sites} == {"myserve/sched.py"}
    assert {fn for _, _, fn in module_sites} == PITFALLS_IN_TRACE | {"report"}  # .tolist(): the guard pass
    assert "guard: 5 syncs at 5 lines" in by_module.stderr
    (module_trace,) = (work / "t-module").glob("myserve.sched.step-*.pt.trace.json.gz")
    (file_trace,) = (work / "t-file").glob("myserve.sched.step-*.pt.trace.json.gz")

    analyzed = _run(installed, "analyze", str(module_trace), "--format", "json", cwd=elsewhere)
    assert analyzed.returncode == 0 and _sites(json.loads(analyzed.stdout)) == module_sites
    reported = _run(installed, "report", str(module_trace), cwd=elsewhere)  # right after profile, default output
    assert reported.returncode == 0, reported.stderr
    assert module_trace.with_name(module_trace.name.replace(".pt.trace.json.gz", ".html")).is_file()
    gated = _run(installed, "gate", str(module_trace), cwd=elsewhere)
    assert gated.returncode == 1 and "gate failed: 5 syncs counted" in gated.stdout + gated.stderr
    compared = _run(installed, "compare", str(module_trace), str(file_trace), cwd=elsewhere)
    assert compared.returncode == 0, compared.stderr
    assert not re.search(r"\b(gone|new)\b", compared.stdout), compared.stdout
    linted = _run(installed, "lint", "../user/myserve", cwd=elsewhere)
    assert linted.returncode == 1 and "5 findings" in linted.stdout
    assert {"SH101", "SH105", "SH109", "SH110", "SH201"} <= set(re.findall(r"SH\d{3}", linted.stdout))
