"""The guard under the shadow device reads each pattern as a GPU run would: device data reaching the host is a
sync, a read of what the code keeps on the host is recorded as host-resident and not counted."""

from __future__ import annotations

import pytest
from shadow_helpers import annotated, recorded

PATTERNS = ("denoise", "encode", "created_inside", "mixed", "explicit")


@pytest.mark.parametrize("name", PATTERNS)
def test_records_are_exactly_the_annotated_lines(patterns, name: str) -> None:
    function = getattr(patterns, name)
    seen, guard, shadow = recorded(function)
    assert seen == annotated(function)
    assert all(record.shadow and record.latent for record in guard.syncs)  # emulated: nothing synced here
    assert guard.count() == sum(n for (_, _, residency), n in seen.items() if residency == "device")
    assert shadow.notes == ()


def test_host_by_design_sigmas_are_recorded_but_not_counted(patterns) -> None:
    _, guard, _ = recorded(patterns.denoise)
    host = [r for r in guard.syncs if r.residency == "host"]
    assert host and all(r.rule == "SH110" and not r.counts for r in host)
    assert [r.rule for r in guard.violations] == ["SH201"]  # the one copy of the loop: sigmas.to("cpu")
    assert "host-resident, not counted" in host[0].describe()


def test_a_plain_cpu_run_counts_every_latent_read(patterns) -> None:
    """Without the shadow device the same code's host reads stand for device reads (the CPU convention)."""
    from synchunt.guard import watch

    with watch() as guard:
        patterns.denoise(device="cpu")
    assert {r.rule for r in guard.violations} == {"SH110", "SH201"}  # the reads and sigmas.to("cpu") counted
    assert all(not r.shadow and r.residency == "host" for r in guard.syncs)


def test_forbid_syncs_raises_only_for_device_syncs(patterns) -> None:
    from synchunt.guard import SyncError, forbid_syncs
    from synchunt.shadow import shadow_device

    with shadow_device():
        scheduler = patterns.EulerLikeScheduler(3, "cuda")
        sample = patterns.torch.zeros(2, 8, device="cuda")
        with forbid_syncs():  # the loop's host reads of sigmas do not raise
            for _ in range(3):
                sample = scheduler.step(sample, sample)
        with pytest.raises(SyncError, match="SH109"), forbid_syncs():
            sample.sum().item()
