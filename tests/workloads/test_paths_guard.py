"""Every audit path under the runtime guard: the ``fixed`` step makes no sync, the ``bad`` step makes the
syncs its registration expects (on the CPU as latent syncs, ``.cpu()`` included), each at the path's own line."""

from __future__ import annotations

import pytest

from synchunt.capture.workload import Workload
from synchunt.guard import watch
from synchunt_workloads.paths import WORKLOADS


def guarded_step(workload: Workload, variant: str) -> list:
    state = workload.setup(workload.make_params({"variant": variant}, small=True))
    with watch() as guard:
        workload.step(state)
    return guard.syncs


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_fixed_variant_makes_no_sync(workload: Workload) -> None:
    syncs = guarded_step(workload, "fixed")
    assert not syncs, [(record.rule, record.op, record.function, record.line) for record in syncs]


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_bad_variant_makes_exactly_its_expected_syncs(workload: Workload) -> None:
    syncs = guarded_step(workload, "bad")
    assert {record.rule for record in syncs} == set(workload.expected_rules)
    module_file = workload.setup.__module__.rsplit(".", 1)[-1] + ".py"
    assert all(record.file.endswith(module_file) for record in syncs)
