"""The pytest plugin, through pytester: marker, fixture, directory option, ini option, lazy import."""

from __future__ import annotations

import subprocess
import sys

# pytester's in-process runs restore sys.modules afterwards; torch cannot be imported twice in one process, so
# it (and the guard) must already be imported here, outside the inner runs.
import pytest
import torch  # noqa: F401

import synchunt.guard  # noqa: F401

pytest_plugins = ["pytester"]

SYNCING_TEST = """\
import pytest
import torch

X = torch.arange(8.0)


@pytest.mark.no_d2h_sync
def test_masked():
    X[X > 2]
    X.sum().item()


@pytest.mark.no_d2h_sync
def test_sliced():
    X[1::2] * 2


@pytest.mark.no_d2h_sync
def test_allowed_region():
    import synchunt

    with synchunt.allow_syncs(reason="reads the total once, by design"):
        X.sum().item()


def test_unmarked():
    X[X > 2]
"""


def _line_number(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), start=1) if line.strip() == text)


def test_marker_fails_with_every_sync_and_its_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_marker=SYNCING_TEST)
    mask_line, item_line = _line_number(SYNCING_TEST, "X[X > 2]"), _line_number(SYNCING_TEST, "X.sum().item()")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*2 device-to-host syncs in a test marked no_d2h_sync (SH101 ×1, SH109 ×1)*",
        f"*1. SH101 aten::index at *test_marker.py:{mask_line} in test_masked (latent*",
        f"*2. SH109 aten::item at *test_marker.py:{item_line} in test_masked (latent*",
        "*synchunt syncs*",
        "FAILED test_marker.py::test_masked - Failed: 2 device-to-host syncs*",
    ])


def test_marker_counts_the_tasks_an_async_test_body_runs_in(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_async="""
        import asyncio
        import pytest
        import torch

        X = torch.arange(8.0)

        async def body():
            await asyncio.sleep(0)
            X[X > 2]  # inside a task of the event loop, not the task-less hook that entered the guard

        @pytest.mark.no_d2h_sync
        def test_async_body():
            asyncio.run(body())
        """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*1 device-to-host sync in a test marked no_d2h_sync (SH101 ×1)*"])


def test_fixture_counts_syncs_by_rule(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fixture="""
        import torch

        def test_counts(sync_watch):
            x = torch.arange(8.0)
            x[x > 2]
            x[x > 3]
            x.tolist()
            assert sync_watch.count("SH101") == 2
            assert sync_watch.count("SH201") == 1
            assert sync_watch.count() == 3
            assert [(site.rule, site.count) for site in sync_watch.by_site()] == [
                ("SH101", 1), ("SH101", 1), ("SH201", 1)]

        def test_free(sync_watch):
            torch.arange(8.0)[::2]
            assert sync_watch.count("SH101") == 0
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def _guarded_tree(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**{
        "hot/test_hot": """
            import pytest
            import torch

            def test_hot_syncs():
                torch.nonzero(torch.arange(4))

            def test_hot_free():
                torch.arange(4)[1:]

            @pytest.mark.allow_d2h_sync(reason="measures the host read on purpose")
            def test_hot_exempt():
                torch.arange(4).sum().item()
        """,
        "cold/test_cold": """
            import torch

            def test_cold_syncs():
                torch.nonzero(torch.arange(4))
        """,
    })


def test_the_closest_marker_decides_and_an_exemption_says_why(pytester: pytest.Pytester) -> None:
    """A module's `pytestmark = no_d2h_sync` with one test exempted: the exemption holds; one without a reason
    fails, as `allow_syncs()` refuses one."""
    pytester.makepyfile(test_module="""
        import pytest
        import torch

        pytestmark = pytest.mark.no_d2h_sync

        def test_guarded():
            torch.nonzero(torch.arange(4))

        @pytest.mark.allow_d2h_sync(reason="reads the count on purpose")
        def test_exempt():
            torch.arange(4).sum().item()

        @pytest.mark.allow_d2h_sync
        def test_exempt_without_reason():
            torch.arange(4)
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*test_guarded*", "*allow_d2h_sync needs a reason*"])


def test_directory_option_guards_every_test_under_it(pytester: pytest.Pytester) -> None:
    _guarded_tree(pytester)
    result = pytester.runpytest("-p", "no:cacheprovider", "--synchunt-guard", "hot")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["FAILED hot/test_hot.py::test_hot_syncs - Failed: 1 device-to-host sync *"])


def test_ini_option_guards_every_test_under_it(pytester: pytest.Pytester) -> None:
    _guarded_tree(pytester)
    pytester.makeini("[pytest]\nsynchunt_guard = cold\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*1 device-to-host sync in a test marked no_d2h_sync (SH103 ×1)",
                                 "FAILED cold/test_cold.py::test_cold_syncs - Failed: *"])


def test_without_the_option_nothing_is_guarded(pytester: pytest.Pytester) -> None:
    _guarded_tree(pytester)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=4)


def test_markers_are_declared_with_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines([
        "@pytest.mark.no_d2h_sync: fail the test if its body makes a device-to-host sync*",
        "@pytest.mark.allow_d2h_sync(reason): exempt this test*",
    ])


def test_loading_the_plugin_does_not_import_torch() -> None:
    code = "import sys, synchunt.pytest_plugin; print('torch' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert output.stdout.strip() == "False"
