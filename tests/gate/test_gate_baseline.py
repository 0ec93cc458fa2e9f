"""Budget and baseline: matching by rule + call site + op, count limits, stale and expired entries, the TOML
file's checks and the write → load round trip. Over real syncs (see conftest)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from synchunt.errors import UsageError
from synchunt.gate import (
    Baseline,
    BaselineEntry,
    SyncKey,
    baseline_from_syncs,
    evaluate,
    load_baseline,
    parse_baseline,
    render_baseline,
    write_baseline,
)
from synchunt.render.gate.headline import gate_headline
from synchunt.sites import NO_FRAME as NO_FRAME_SITE

MASKED_SITE = "workloads/hicache_dcp/translate.py:dcp_kernel_indices_masked"
MASKED = SyncKey("SH101", MASKED_SITE, "aten::nonzero")
EVENT_SYNC = SyncKey("SH302", NO_FRAME_SITE, "cudaEventSynchronize")
TODAY = dt.date(2026, 6, 30)


def baseline_of(*entries: BaselineEntry) -> Baseline:
    return Baseline(entries, Path("synchunt-baseline.toml"))


def test_the_shared_set_is_8_masked_syncs_and_3_without_a_python_frame(shared_analysis):
    result = evaluate(shared_analysis, today=TODAY)
    assert len(result.counted) == 11 and len(result.allowed) == 0
    assert result.over_budget and not result.passed and result.exit_code == 1
    assert gate_headline(result).startswith("gate failed: 11 syncs counted, budget 0 (3 confirmed + 8 latent syncs")


@pytest.mark.parametrize(("max_syncs", "exit_code"), [(0, 1), (10, 1), (11, 0), (50, 0)])
def test_the_budget_is_the_number_of_syncs_allowed(shared_analysis, max_syncs, exit_code):
    assert evaluate(shared_analysis, max_syncs=max_syncs, today=TODAY).exit_code == exit_code


def test_a_negative_budget_is_a_usage_error(shared_analysis):
    with pytest.raises(UsageError, match="the sync budget must be 0 or more"):
        evaluate(shared_analysis, max_syncs=-1)


def test_an_entry_without_max_allows_every_matching_sync(shared_analysis):
    result = evaluate(shared_analysis, baseline=baseline_of(BaselineEntry(MASKED, "reference path")), today=TODAY)
    assert len(result.allowed) == 8 and {s.call_site.function for s in result.allowed} == {"dcp_kernel_indices_masked"}
    assert sorted(s.rule for s in result.counted) == ["SH110", "SH301", "SH302"]
    (usage,) = result.usage
    assert (usage.matched, usage.allowed, usage.status) == (8, 8, "ok")
    assert evaluate(shared_analysis, max_syncs=3, baseline=baseline_of(BaselineEntry(MASKED, "reference path")),
                    today=TODAY).passed


def test_an_entry_allows_at_most_max_syncs_earliest_first(shared_analysis):
    result = evaluate(shared_analysis, baseline=baseline_of(BaselineEntry(MASKED, "reference", max_count=5)),
                      today=TODAY)
    (usage,) = result.usage
    assert (usage.matched, usage.allowed, usage.over_limit, usage.status) == (8, 5, 3, "3 over max")
    masked = sorted(s.ts_us for s in shared_analysis.records if s.rule == "SH101")
    assert [s.ts_us for s in result.allowed] == masked[:5]
    assert len(result.counted) == 3 + 3
    assert evaluate(shared_analysis, max_syncs=6, baseline=baseline_of(BaselineEntry(MASKED, "r", max_count=5)),
                    today=TODAY).passed


def test_an_entry_for_syncs_without_a_python_frame_matches_by_rule_and_op(shared_analysis):
    result = evaluate(shared_analysis, baseline=baseline_of(BaselineEntry(EVENT_SYNC, "waits for the copy")),
                      today=TODAY)
    assert [s.op for s in result.allowed] == ["cudaEventSynchronize"]
    assert result.usage[0].matched == 1


@pytest.mark.parametrize("key", [
    SyncKey("SH102", MASKED_SITE, "aten::nonzero"),  # another rule
    SyncKey("SH101", "workloads/hicache_dcp/translate.py:dcp_kernel_indices_sliced", "aten::nonzero"),
    SyncKey("SH101", "workloads/hicache_dcp/other.py:dcp_kernel_indices_masked", "aten::nonzero"),
    SyncKey("SH101", MASKED_SITE, "aten::masked_select"),  # another op
])
def test_an_entry_must_match_rule_site_and_op_or_it_is_stale(shared_analysis, key):
    result = evaluate(shared_analysis, baseline=baseline_of(BaselineEntry(key, "x")), today=TODAY)
    assert len(result.allowed) == 0 and len(result.counted) == 11
    assert [usage.entry.key for usage in result.stale_entries] == [key]


def test_stale_entries_are_reported_and_fail_only_with_strict(shared_analysis):
    entries = (BaselineEntry(MASKED, "reference"), BaselineEntry(EVENT_SYNC, "copy"),
               BaselineEntry(SyncKey("SH105", MASKED_SITE, "aten::_unique2"), "gone since the rewrite"))
    lenient = evaluate(shared_analysis, max_syncs=2, baseline=baseline_of(*entries), today=TODAY)
    assert lenient.passed and [u.entry.key.rule for u in lenient.stale_entries] == ["SH105"]
    assert "1 stale baseline entry" in gate_headline(lenient)
    strict = evaluate(shared_analysis, max_syncs=2, baseline=baseline_of(*entries), strict=True, today=TODAY)
    assert not strict.passed and strict.exit_code == 1 and not strict.over_budget


@pytest.mark.parametrize(("today", "expired"), [(dt.date(2026, 6, 29), False), (dt.date(2026, 6, 30), False),
                                                (dt.date(2026, 7, 1), True)])
def test_an_entry_expires_the_day_after_its_date_and_fails_only_with_strict(shared_analysis, today, expired):
    baseline = baseline_of(BaselineEntry(MASKED, "until the fix lands", expires=TODAY))
    result = evaluate(shared_analysis, max_syncs=3, baseline=baseline, today=today)
    assert [u.expired for u in result.usage] == [expired]
    assert len(result.allowed) == 8  # an expired entry still allows; expiry is a reminder, strict makes it fail
    assert result.passed
    assert evaluate(shared_analysis, max_syncs=3, baseline=baseline, strict=True, today=today).passed == (not expired)


GOOD_ENTRY = 'rule = "SH101"\nsite = "a.py:f"\nop = "aten::nonzero"\nreason = "ok"\n'


@pytest.mark.parametrize(("text", "message"), [
    ("[[allow]\n", "is not valid TOML"),
    ('schema = "synchunt.baseline/9"\n', "schema 'synchunt.baseline/9' is not"),
    ("allow = 3\n", "'allow' must be an array of tables"),
    ("[[allowed]]\n" + GOOD_ENTRY, "unknown top-level key(s) allowed"),
    ("[[allow]]\n" + GOOD_ENTRY.replace('reason = "ok"\n', ""), "entry 1 (line 1): 'reason' must be a non-empty"),
    ("[[allow]]\n" + GOOD_ENTRY.replace('"ok"', '"  "'), "'reason' must be a non-empty string"),
    ("[[allow]]\n" + GOOD_ENTRY.replace("SH101", "SH999"), "unknown rule 'SH999'"),
    ("[[allow]]\n" + GOOD_ENTRY + "max = -1\n", "'max' must be a non-negative integer"),
    ("[[allow]]\n" + GOOD_ENTRY + "max = true\n", "'max' must be a non-negative integer"),
    ("[[allow]]\n" + GOOD_ENTRY + "max = 2.5\n", "'max' must be a non-negative integer"),
    ("[[allow]]\n" + GOOD_ENTRY + 'expires = "soon"\n', "'expires' must be a date"),
    ("[[allow]]\n" + GOOD_ENTRY + "expires = 2026-01-01T10:00:00\n", "not a date and time"),
    ("[[allow]]\n" + GOOD_ENTRY + "count = 3\n", "unknown key(s) count"),
    ("[[allow]]\n" + GOOD_ENTRY + "\n[[allow]]\n" + GOOD_ENTRY, "two entries for SH101 aten::nonzero at a.py:f"),
])
def test_a_bad_baseline_is_a_usage_error_naming_the_file_and_entry(tmp_path, text, message):
    path = tmp_path / "baseline.toml"
    path.write_text(text)
    with pytest.raises(UsageError) as raised:
        load_baseline(path)
    assert message in str(raised.value) and str(path) in str(raised.value)
    assert raised.value.exit_code == 2


def test_a_missing_baseline_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such baseline"):
        load_baseline(tmp_path / "absent.toml")


def test_entries_know_their_line_and_accept_string_dates():
    text = ('schema = "synchunt.baseline/1"\n\n[[allow]]\n' + GOOD_ENTRY + "\n# second\n[[allow]]\n"
            + GOOD_ENTRY.replace("a.py:f", "b.py:g") + 'expires = "2027-01-31"\nmax = 0\n')
    first, second = parse_baseline(text).entries
    assert (first.line, second.line) == (3, 10)
    assert second.expires == dt.date(2027, 1, 31) and second.max_count == 0 and first.max_count is None


def test_a_written_baseline_loads_back_and_allows_exactly_the_current_syncs(shared_analysis, tmp_path):
    written = write_baseline(baseline_from_syncs(shared_analysis.records, today=TODAY), tmp_path / "b.toml")
    loaded = load_baseline(written)
    assert {entry.key: entry.max_count for entry in loaded.entries} == {
        MASKED: 8, EVENT_SYNC: 1, SyncKey("SH110", NO_FRAME_SITE, "aten::_local_scalar_dense"): 1,
        SyncKey("SH301", NO_FRAME_SITE, "cudaDeviceSynchronize"): 1}
    assert all("2026-06-30" in entry.reason for entry in loaded.entries)
    result = evaluate(shared_analysis, baseline=loaded, strict=True, today=TODAY)
    assert result.passed and len(result.allowed) == 11 and not result.baseline_problems
    assert render_baseline(loaded) == written.read_text()


def test_rewriting_a_baseline_keeps_reviewed_reasons_and_expiry(shared_analysis):
    reviewed = baseline_of(BaselineEntry(MASKED, "reference path, kept on purpose", dt.date(2027, 1, 31), 54),
                           BaselineEntry(SyncKey("SH105", MASKED_SITE, "aten::_unique2"), "gone"))
    fresh = baseline_from_syncs(shared_analysis.records, today=TODAY, previous=reviewed)
    masked = fresh.entry_for(MASKED)
    assert masked == BaselineEntry(MASKED, "reference path, kept on purpose", dt.date(2027, 1, 31), 8)
    assert fresh.entry_for(SyncKey("SH105", MASKED_SITE, "aten::_unique2")) is None


def test_writing_refuses_to_overwrite_without_force(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text("# reviewed\n")
    baseline = baseline_of(BaselineEntry(MASKED, "r"))
    with pytest.raises(UsageError, match="exists; pass --force"):
        write_baseline(baseline, path)
    assert path.read_text() == "# reviewed\n"
    write_baseline(baseline, path, force=True)
    assert load_baseline(path).entries[0].key == MASKED


def test_strings_survive_the_toml_round_trip():
    reason = 'says "why"\\ on\ntwo lines\twith a tab, a DEL \x7f and ünïcödé'
    site = r"C:\src\model.py:forward"
    text = render_baseline(baseline_of(BaselineEntry(SyncKey("SH101", site, "aten::nonzero"), reason)))
    (entry,) = parse_baseline(text).entries
    assert (entry.key.site, entry.reason) == (site, reason)


def test_no_evidence_is_nothing_to_judge_not_a_pass(tmp_path):
    """A trace with no usable event, or a profiled thread with no events, is exit 2 with the reason."""
    from synchunt.attribute import analyze
    from synchunt.render.gate import GATE_FORMATS

    empty = tmp_path / "empty.json"
    empty.write_text('{"traceEvents": []}')
    result = evaluate(analyze(empty), today=TODAY)
    assert not result.judged and not result.passed and result.exit_code == 2
    assert result.missing_evidence == (f"{empty}: no usable events were read",)
    assert gate_headline(result).startswith("gate: nothing to judge:")
    for name in ("github", "sarif", "junit", "json", "text"):
        assert "no usable events were read" in " ".join(GATE_FORMATS.get(name)(result).split())
    unusable = tmp_path / "unusable.json"
    unusable.write_text('{"traceEvents": [{"ph": "X", "name": "aten::nonzero", "cat": "cpu_op", "ts": "x", '
                        '"dur": 1, "pid": 1, "tid": 1}, {"ph": "X", "name": "aten::add", "cat": "cpu_op", '
                        '"ts": null, "dur": 1, "pid": 1, "tid": 1}]}')
    assert evaluate(analyze(unusable), today=TODAY).exit_code == 2


def test_an_idle_budget_needs_device_activity_and_counts_the_idle(shared_analysis, masked_small_trace):
    from synchunt.attribute import analyze

    latent_only = evaluate(analyze(masked_small_trace), max_idle_us=0.0, today=TODAY)
    assert latent_only.exit_code == 2 and "needs device activity" in latent_only.missing_evidence[0]
    within = evaluate(shared_analysis, max_syncs=100, max_idle_us=1e9, today=TODAY)
    assert within.passed and within.counted_idle_us is not None
    over = evaluate(shared_analysis, max_syncs=100, max_idle_us=within.counted_idle_us / 2, today=TODAY)
    assert over.over_idle_budget and over.exit_code == 1 and "device idle" in gate_headline(over)


def test_a_huge_baseline_prints_a_bounded_table(shared_analysis):
    from synchunt.render.gate import GATE_FORMATS
    from synchunt.render.gate.text import BASELINE_ROWS

    entries = tuple(BaselineEntry(SyncKey("SH101", f"pkg/m{i}.py:f", "aten::nonzero"), "ok", max_count=1)
                    for i in range(5000))
    result = evaluate(shared_analysis, baseline=baseline_of(*entries), today=TODAY)
    text = GATE_FORMATS.get("text")(result)
    assert text.count("pkg/m") == BASELINE_ROWS and "4960 more entries (4960 stale)" in text
    assert gate_headline(result).endswith("5000 stale baseline entries")


@pytest.mark.parametrize("text", [
    "x = " + "[" * 5000 + "]" * 5000,
    '[[allow]]\nrule = "SH101"\nsite = "a.py:f"\nop = "aten::nonzero"\nreason = ' + "{a = " * 1000 + "1" + "}" * 1000,
])
def test_a_baseline_nested_too_deeply_is_one_usage_error(text):
    with pytest.raises(UsageError, match="nested too deeply"):
        parse_baseline(text)


def test_a_baseline_that_is_no_regular_file_is_refused_unread(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo.toml")  # reading it would block for ever, /dev/zero would never end
    os.symlink("/dev/zero", tmp_path / "zero.toml")
    for path in (tmp_path / "fifo.toml", tmp_path / "zero.toml"):
        with pytest.raises(UsageError, match="not a regular file"):
            load_baseline(path)


def test_a_baseline_rewritten_with_its_size_and_mtime_kept_is_read_anew(tmp_path):
    """Nothing about a baseline is remembered between loads: an entry edited in place (a copy that keeps times)
    gives the new limit."""
    import os

    path = tmp_path / "synchunt-baseline.toml"
    write_baseline(baseline_of(BaselineEntry(MASKED, "reviewed", max_count=54)), path)
    assert load_baseline(path).entry_for(MASKED).max_count == 54
    stat = path.stat()
    path.write_text(path.read_text().replace("max = 54", "max = 45"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert load_baseline(path).entry_for(MASKED).max_count == 45
