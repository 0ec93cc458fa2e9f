"""Traces for the report tests: profiled once per session (small presets unless the full 54 are needed), a
hostile-names trace derived from a real one, and a headless Chromium when one can start."""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# The hand-written Kineto traces of the impact tests build this directory's GPU traces too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "impact"))
from report_support import HOSTILE_FUNCTION, HOSTILE_LABEL, HOSTILE_OP, HOSTILE_SCOPE, HOSTILE_THREAD

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "artifacts" / "report"

SHARED_REAL = REPO_ROOT.parent / "shared" / "traces"


@pytest.fixture(scope="session")
def shared_trace() -> Callable[[str], Path]:
    """``shared_trace("real/tracelens/x.json.gz")``: a real trace beside the checkout, or a skip."""
    def find(relative: str) -> Path:
        path = SHARED_REAL / relative
        if not path.is_file():
            pytest.skip(f"the shared real traces are not beside the checkout ({path})")
        return path

    return find


@pytest.fixture(scope="session")
def gpu_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from report_traces import write_gpu_trace

    return write_gpu_trace(tmp_path_factory.mktemp("gpu") / "gpu.pt.trace.json.gz")


@pytest.fixture(scope="session")
def masked_small(profiled: Callable[..., Path]) -> Path:
    return profiled("hicache-dcp", small=True, impl="masked")


@pytest.fixture(scope="session")
def sliced_small(profiled: Callable[..., Path]) -> Path:
    return profiled("hicache-dcp", small=True, impl="sliced")


@pytest.fixture(scope="session")
def masked_full(profiled: Callable[..., Path]) -> Path:
    return profiled("hicache-dcp", impl="masked")


@pytest.fixture(scope="session")
def sliced_full(profiled: Callable[..., Path]) -> Path:
    return profiled("hicache-dcp", impl="sliced")


@pytest.fixture(scope="session")
def hostile_trace(masked_small: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small masked trace with thread, scope, call-site function, op and label names made hostile."""
    with gzip.open(masked_small, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    for event in data["traceEvents"]:
        name = event.get("name", "")
        if event.get("ph") == "M" and name == "thread_name":
            event["args"]["name"] = HOSTILE_THREAD
        elif event.get("cat") == "user_annotation" and name == "layer_1":
            event["name"] = HOSTILE_SCOPE
        elif event.get("cat") == "python_function" and name.endswith(": dcp_kernel_indices_masked"):
            event["name"] = name.replace("dcp_kernel_indices_masked", HOSTILE_FUNCTION)
        elif event.get("cat") == "cpu_op" and name == "aten::cat":
            event["name"] = HOSTILE_OP
    meta = data["synchunt"]
    meta.pop("guard", None)  # its records name the original function; this trace is about names in the page
    meta["label"] = HOSTILE_LABEL
    meta["threads"] = {tid: HOSTILE_THREAD for tid in meta.get("threads", {})}
    meta["profiled_thread"] = HOSTILE_THREAD
    path = tmp_path_factory.mktemp("hostile") / "hostile.pt.trace.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(data, handle)
    return path


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Screenshots land here (git-ignored) so CI can keep them."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from report_browser import Browser, find_chromium

    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium)")
    try:
        instance = Browser(executable)
    except (OSError, RuntimeError, TimeoutError) as error:
        pytest.skip(f"Chromium at {executable} cannot start headless here: {error}")
    yield instance
    instance.close()
