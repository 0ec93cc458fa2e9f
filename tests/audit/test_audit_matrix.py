"""The audit matrix over real registered paths and toy paths: both variants, both signals, verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from synchunt.attribute import analyze
from synchunt.audit import Agreement, AuditResult, run_audit
from synchunt.capture.workload import Workload
from synchunt.errors import UsageError


@pytest.fixture(scope="module")
def real_subset(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    traces = tmp_path_factory.mktemp("audit-traces")
    return run_audit(["dcp-kv-filter", "host-pool-free"], traces_dir=traces)


def cell(result: AuditResult, path: str, role: str):
    return next(c for c in result.cells if c.path == path and c.role == role)


def test_audit_real_subset_has_both_variants_of_each_path_in_order(real_subset: AuditResult) -> None:
    assert [(c.path, c.role) for c in real_subset.cells] == [
        ("dcp-kv-filter", "bad"), ("dcp-kv-filter", "fixed"), ("host-pool-free", "bad"), ("host-pool-free", "fixed")]
    assert real_subset.device == "cpu" and real_subset.trace_mode == "latent" and real_subset.small
    assert real_subset.passed and real_subset.exit_code == 0


def test_audit_mask_path_bad_variant_both_signals_agree(real_subset: AuditResult) -> None:
    bad = cell(real_subset, "dcp-kv-filter", "bad")
    assert bad.trace.syncs == bad.guard.syncs > 0
    assert dict(bad.trace.rules) == dict(bad.guard.rules) == {"SH101": bad.guard.syncs}
    assert bad.agreement is Agreement.AGREE and bad.notes == ()
    assert bad.missing_rules == () and bad.unexpected_rules == ()
    # The trace names the function; the guard names the line inside it.
    assert {s.function for s in bad.trace.sites} == {"filter_local_by_mask"}
    (guard_site,) = bad.guard.sites
    assert guard_site.function == "filter_local_by_mask"
    source = Path(guard_site.file).read_text().splitlines()[guard_site.line - 1]
    assert "kv_indices[" in source and "==" in source


def test_audit_fixed_variants_are_sync_free_under_both_signals(real_subset: AuditResult) -> None:
    for path in ("dcp-kv-filter", "host-pool-free"):
        fixed = cell(real_subset, path, "fixed")
        assert fixed.trace.syncs == 0 and fixed.guard.syncs == 0
        assert fixed.agreement is Agreement.AGREE and fixed.passed


def test_audit_copy_only_path_is_a_trace_blind_spot_on_cpu(real_subset: AuditResult) -> None:
    bad = cell(real_subset, "host-pool-free", "bad")
    assert bad.trace.syncs == 0 and dict(bad.guard.rules) == {"SH201": 1}
    assert bad.agreement is Agreement.BLIND_SPOT
    assert len(bad.notes) == 1 and "cannot see SH201" in bad.notes[0]
    assert bad.passed and bad.missing_rules == ()


def test_audit_keeps_traces_in_the_given_folder(real_subset: AuditResult) -> None:
    bad = cell(real_subset, "dcp-kv-filter", "bad")
    assert bad.trace_file is not None and Path(bad.trace_file).is_file()
    reread = analyze(bad.trace_file, mode="latent", thread="scheduler")
    assert len(reread.syncs) == bad.trace.syncs


def test_audit_without_a_folder_leaves_no_trace_file(toys: dict[str, Workload]) -> None:
    result = run_audit(["honest"], registry=toys)
    assert all(c.trace_file is None for c in result.cells)
    assert result.passed


def test_audit_fails_when_a_fixed_variant_syncs(toys: dict[str, Workload]) -> None:
    result = run_audit(["leaky-fixed"], registry=toys)
    fixed = cell(result, "leaky-fixed", "fixed")
    assert fixed.trace.syncs > 0 and fixed.guard.syncs > 0
    assert not fixed.passed and "fixed variant syncs" in fixed.failure
    assert cell(result, "leaky-fixed", "bad").passed
    assert result.exit_code == 1 and result.failures == [fixed]


def test_audit_fails_when_a_bad_variant_shows_no_sync(toys: dict[str, Workload]) -> None:
    result = run_audit(["silent-bad"], registry=toys)
    bad = cell(result, "silent-bad", "bad")
    assert bad.trace.syncs == bad.guard.syncs == 0
    assert "shows no sync" in bad.failure and bad.missing_rules == ("SH101",)
    assert result.exit_code == 1


def test_audit_reports_an_expected_rule_mismatch_without_failing(toys: dict[str, Workload]) -> None:
    result = run_audit(["wrong-expectation"], registry=toys)
    bad = cell(result, "wrong-expectation", "bad")
    assert bad.missing_rules == ("SH105",) and bad.unexpected_rules == ("SH101",)
    assert result.exit_code == 0


def test_audit_turns_a_crashing_path_into_a_failed_cell(toys: dict[str, Workload]) -> None:
    result = run_audit(["crashing", "honest"], registry=toys)
    crashed = cell(result, "crashing", "bad")
    assert crashed.agreement is Agreement.UNKNOWN and crashed.trace is None and crashed.guard is None
    assert "toy path failed on purpose" in crashed.error
    assert cell(result, "honest", "fixed").passed  # the rest of the matrix still ran
    assert result.exit_code == 1


def test_audit_names_keep_their_order_and_duplicates_collapse(toys: dict[str, Workload]) -> None:
    result = run_audit(["wrong-expectation", "honest", "wrong-expectation"], registry=toys)
    assert result.paths == ["wrong-expectation", "honest"]


@pytest.mark.parametrize(("names", "device", "message"), [
    (["no-such-path"], "cpu", "unknown path"),
    (["honest"], "tpu", "unknown device"),
])
def test_audit_rejects_unknown_names_and_devices(toys: dict[str, Workload], names: list[str], device: str,
                                                 message: str) -> None:
    with pytest.raises(UsageError, match=message) as raised:
        run_audit(names, device=device, registry=toys)
    assert raised.value.exit_code == 2
