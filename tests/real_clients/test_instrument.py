"""The truth instrument on a file whose syncs are known line by line (torch only: runs everywhere)."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "host_reads.py"


def _line(text: str) -> int:
    """The line of the fixture whose comment says ``text``."""
    for number, line in enumerate(FIXTURE.read_text().splitlines(), 1):
        if line.rstrip().endswith(f"# {text}"):
            return number
    raise AssertionError(f"no line commented {text!r}")


@pytest.fixture(scope="module")
def events():
    from instrument import SyncRecorder

    spec = importlib.util.spec_from_file_location("host_reads", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    state = module.setup()
    with SyncRecorder(str(FIXTURE)) as recorder:
        module.step(state)
    return recorder.events


def test_each_sync_at_its_line_with_its_kind(events) -> None:
    found = Counter((e.site.line, e.kind) for e in events)
    assert found == Counter({
        (_line("boolean-mask index"), "mask-index"): 1,
        (_line("scalar read"), "scalar-read"): 1,
        (_line("truthiness"), "truthiness"): 1,
        (_line("one-argument where"), "nonzero"): 1,
        (_line("host read, no dispatch on a CPU tensor"), "device-to-host"): 1,
        (_line("device-to-host move"), "device-to-host"): 1,
        (_line("reads host memory: no device wait on a GPU"), "scalar-read"): 1,
        (_line("reads host memory too"), "device-to-host"): 1,
    })


def test_site_and_via_are_the_users_file_here(events) -> None:
    assert {e.site.file for e in events} == {str(FIXTURE)}
    assert all(e.via == e.site for e in events)


def test_reads_of_a_cpu_copy_are_host_reads(events) -> None:
    host = {e.site.line for e in events if e.host_operands}
    assert host == {_line("reads host memory: no device wait on a GPU"), _line("reads host memory too")}


def test_patches_are_undone() -> None:
    import torch
    from instrument import SyncRecorder

    before = (torch.Tensor.tolist, torch.Tensor.cpu, torch.Tensor.to, torch.tensor)
    with SyncRecorder(str(FIXTURE)):
        pass
    assert (torch.Tensor.tolist, torch.Tensor.cpu, torch.Tensor.to, torch.tensor) == before
