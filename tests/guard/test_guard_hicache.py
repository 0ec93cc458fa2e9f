"""The guard on the HiCache DCP load path (CPU): the masked translation syncs once per layer for host and
device indices (2 × 27 = 54), all at one line; the sliced fix makes none."""

from __future__ import annotations

import ast
import linecache
import threading

import pytest

from synchunt.capture import get_workload
from synchunt.guard import watch
from synchunt_workloads.hicache_dcp import run_on_scheduler_thread


def _is_boolean_mask_read(source_line: str) -> bool:
    """True when the line reads ``x[<comparison>]``, the boolean-mask subscript the brief describes."""
    tree = ast.parse(source_line.strip())
    return any(isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Compare)
               for node in ast.walk(tree))


@pytest.fixture(scope="module")
def hicache():
    return get_workload("hicache-dcp")


def test_masked_iteration_finds_54_syncs_at_the_translation_line(hicache) -> None:
    params = hicache.make_params()
    assert params.layers == 27
    state = hicache.setup(params)
    with watch() as recorder:
        hicache.step(state)
    assert len(recorder.syncs) == 2 * params.layers == 54
    (site,) = recorder.by_site()
    assert (site.rule, site.op, site.count) == ("SH101", "aten::index", 54)
    assert site.file.endswith("translate.py")
    assert _is_boolean_mask_read(linecache.getline(site.file, site.line))
    assert all(record.latent and record.thread == threading.current_thread().name for record in recorder.syncs)
    assert {record.function for record in recorder.syncs} == {site.function}
    assert len({record.stack[1:] for record in recorder.syncs}) == 2  # host and device index translation


def test_sliced_iteration_finds_no_sync(hicache) -> None:
    state = hicache.setup(hicache.make_params({"impl": "sliced"}))
    with watch() as recorder:
        hicache.step(state)
    assert recorder.syncs == []


def test_guard_on_the_scheduler_thread_does_not_see_the_main_thread(hicache) -> None:
    state = hicache.setup(hicache.make_params({"impl": "masked", "layers": 3}))

    def guarded_step() -> int:
        with watch() as recorder:
            hicache.step(state)
        assert {record.thread for record in recorder.syncs} == {hicache.thread_name}
        return len(recorder.syncs)

    with watch() as main_thread:
        assert run_on_scheduler_thread(guarded_step, name=hicache.thread_name) == 6
    assert main_thread.syncs == []
