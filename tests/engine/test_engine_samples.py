"""The sample traces that ship in traces/samples stay readable and give the documented results."""

from __future__ import annotations

from pathlib import Path

import synchunt

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"


def test_masked_sample_has_54_syncs_two_per_layer():
    result = synchunt.analyze(SAMPLES / "hicache-dcp-masked-cpu.pt.trace.json.gz")
    assert result.summary["latent"] == 54
    site = result.call_sites.iloc[0]
    assert site["function"] == "dcp_kernel_indices_masked"
    assert set(site["scopes"].values()) == {2} and len(site["scopes"]) == 27
    assert result.traces[0].synchunt["params"]["impl"] == "masked"


def test_sliced_sample_is_sync_free():
    assert synchunt.analyze(SAMPLES / "hicache-dcp-sliced-cpu.pt.trace.json.gz").summary["syncs"] == 0
