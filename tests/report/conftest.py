"""Traces for the report tests: profiled once per session (small presets unless the full 54 are needed), a
hostile-names trace derived from a real one, and a headless Chromium when one can start."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "artifacts" / "report"

# Each would run script, or break out of the data island, if the report built HTML from trace text.
HOSTILE_THREAD = 'sched</script><script>window.__pwned = "thread"; alert("thread")</script>'
HOSTILE_SCOPE = "layer_1\"'><img src=x onerror=\"window.__pwned='scope'\">"
HOSTILE_FUNCTION = "fn<script>document.body.setAttribute('data-pwned', 'fn')</script>&amp;\u2028"
HOSTILE_OP = "aten::cat</script><svg onload=\"window.__pwned='op'\">"
HOSTILE_LABEL = "<b onmouseover=alert(1)>masked</b>"


def data_island(page: str) -> dict:
    """The JSON data a rendered report carries."""
    match = re.search(r'<script type="application/json" id="synchunt-data">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match[1])


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
