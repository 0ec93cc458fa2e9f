"""`pytest --synchunt-device shadow-cuda`: the session runs as on a one-GPU machine, from collection on."""

from __future__ import annotations

import pytest
import torch

# Imported once, outside pytester's in-process runs: pytester drops what a run imported, and a later fresh import
# of torch's functional collectives registers their op library a second time (a RuntimeError in later tests).
import torch.distributed._functional_collectives
import torch.distributed.tensor

import synchunt.guard
import synchunt.pytest_plugin
import synchunt.shadow  # noqa: F401

pytest_plugins = ["pytester"]

SUITE = """\
import pytest
import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # decided at import, as test modules do
SIGMAS = torch.linspace(1.0, 0.0, 5, device=DEVICE).to("cpu")


@pytest.mark.no_d2h_sync
def test_reads_of_host_memory():
    assert SIGMAS[1] > 0


@pytest.mark.no_d2h_sync
def test_a_read_of_device_memory():
    torch.ones(3, device=DEVICE).sum().item()
"""


def test_guarded_tests_fail_only_on_device_syncs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--synchunt-device", "shadow-cuda")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*1 device-to-host sync in a test marked no_d2h_sync (SH109 ×1)*",
                                 "*SH109 aten::item at *test_suite.py:15 in test_a_read_of_device_memory "
                                 "(shadow device*"])
    assert not torch.cuda.is_available()  # the session's shadow device is gone with it


def test_without_it_every_host_read_counts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=2)


def test_the_ini_option_and_its_check(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini("[pytest]\nsynchunt_device = shadow-cuda\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1, failed=1)
    pytester.makeini("[pytest]\nsynchunt_device = tpu\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stderr.fnmatch_lines(["*synchunt_device = 'tpu': use one of cpu, shadow-cuda*"])
