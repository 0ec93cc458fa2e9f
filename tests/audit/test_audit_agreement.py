"""The agreement definition, difference by difference, on signals built by hand."""

from __future__ import annotations

from synchunt.audit import Agreement, Signal, compare_signals, trace_can_see
from synchunt.rules import RULES
from synchunt.sites import SiteCount as Site


def signal(*sites: tuple[str, str, int], mode: str = "latent") -> Signal:
    """``signal(("SH101", "filter", 2))``: rule, function, count per site."""
    rules: dict[str, int] = {}
    for rule, _, count in sites:
        rules[rule] = rules.get(rule, 0) + count
    return Signal(syncs=sum(rules.values()), confirmed=0, latent=sum(rules.values()), rules=rules,
                  sites=tuple(Site(rule, "aten::op", "f.py", 1, function, count) for rule, function, count in sites),
                  mode=mode)


def test_audit_agreement_same_rules_counts_and_functions_agree() -> None:
    same = signal(("SH101", "filter", 2), ("SH105", "free", 1))
    assert compare_signals(same, same, "latent") == (Agreement.AGREE, ())
    assert compare_signals(signal(), signal(), "latent") == (Agreement.AGREE, ())


def test_audit_agreement_copy_only_in_the_guard_is_a_latent_blind_spot() -> None:
    status, notes = compare_signals(signal(), signal(("SH201", "free", 1)), "latent")
    assert status is Agreement.BLIND_SPOT
    assert notes == ("the latent trace cannot see SH201 (blocking copy) ×1 that the guard saw: on a CPU the copy "
                     "returns its input, so the trace has no copy to show",)


def test_audit_agreement_a_confirmed_trace_has_no_blind_spot() -> None:
    status, notes = compare_signals(signal(), signal(("SH201", "free", 1)), "confirmed")
    assert status is Agreement.DISAGREE and notes == ("only the guard saw SH201 ×1 (at free)",)


def test_audit_agreement_a_blind_spot_does_not_hide_a_real_difference() -> None:
    status, notes = compare_signals(signal(("SH101", "a", 1)), signal(("SH101", "a", 2), ("SH201", "a", 1)),
                                    "latent")
    assert status is Agreement.DISAGREE
    assert notes[0] == "SH101 counts differ: trace ×1, guard ×2" and "cannot see SH201" in notes[1]


def test_audit_agreement_names_each_kind_of_difference() -> None:
    status, notes = compare_signals(signal(("SH103", "plan", 1), ("SH105", "free", 1)),
                                    signal(("SH101", "filter", 1), ("SH105", "other", 1)), "latent")
    assert status is Agreement.DISAGREE
    assert notes == ("only the guard saw SH101 ×1 (at filter)", "only the trace saw SH103 ×1 (at plan)",
                     "SH105 call sites differ: trace in free, guard in other")


def test_audit_agreement_visibility_comes_from_the_catalogue() -> None:
    for rule in RULES:
        has_latent_op = rule.latent_in_traces
        assert trace_can_see(rule.code, "latent") is has_latent_op
        assert trace_can_see(rule.code, "confirmed")
    assert trace_can_see("SH101", "latent") and not trace_can_see("SH201", "latent")
    assert trace_can_see("SH999", "latent")  # unknown codes are never excused
