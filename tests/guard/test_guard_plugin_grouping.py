"""The pytest plugin's failure report lists a sync repeated in a loop once, with how many times it happened."""

from __future__ import annotations

# torch and the guard are imported outside pytester's in-process runs (torch cannot be imported twice).
import pytest
import torch  # noqa: F401

import synchunt.guard  # noqa: F401

pytest_plugins = ["pytester"]

LOOPING_TEST = """\
import pytest
import torch

X = torch.arange(8.0)


@pytest.mark.no_d2h_sync
def test_loop():
    for _ in range(500):
        X.sum().item()
    X[X > 2]
"""


def test_identical_records_are_grouped(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_looping=LOOPING_TEST)
    result = pytester.runpytest_inprocess()  # the plugin loads through its pytest11 entry point
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "501 device-to-host syncs in a test marked no_d2h_sync" in text
    item_lines = [line for line in text.splitlines() if "test_looping.py:10" in line and "SH109" in line]
    assert item_lines and all(line.rstrip().endswith("×500") for line in item_lines)
    mask_lines = [line for line in text.splitlines() if "test_looping.py:11" in line and "SH101" in line]
    assert mask_lines and not any("×" in line for line in mask_lines)
    # 500 identical reads no longer print 500 lines (each of the message and the section lists them once).
    assert sum("test_looping.py:10" in line for line in text.splitlines()) <= 4
