"""A sync no trace event times (seen by the runtime guard only) has an unknown stall, not a zero one: the site
says so in every format instead of printing 0.0 µs."""

from __future__ import annotations

import msgspec
from attribute.field_probe import INFO, OTHER, PROBE

from synchunt.attribute import Analysis
from synchunt.attribute.model import GUARD_ONLY_STALL
from synchunt.render.analysis import ANALYSIS_FORMATS

GUARD_ONLY = msgspec.structs.replace(PROBE, stall_us=0.0, stall_source=GUARD_ONLY_STALL, impact=None)


def _analysis(*syncs) -> Analysis:
    return Analysis((INFO,), syncs, {"mode": "confirmed"})


def _site(analysis: Analysis, file: str):
    [site] = [s for s in analysis.sites if s.file == file]
    return site


def test_a_guard_only_site_counts_its_unmeasured_syncs() -> None:
    analysis = _analysis(GUARD_ONLY, GUARD_ONLY, OTHER)
    assert _site(analysis, "probelib/ops.py").unmeasured == 2
    assert _site(analysis, "myapp/other.py").unmeasured == 0
    assert _site(_analysis(PROBE, OTHER), "probelib/ops.py").unmeasured == 0  # a stall from elsewhere is kept


def test_the_table_says_not_measured_rather_than_zero() -> None:
    text = ANALYSIS_FORMATS.get("text")(_analysis(GUARD_ONLY, OTHER))
    row = text[text.index("probelib/ops.py:17"):]
    row = row[:row.index("│ 2 │")] if "│ 2 │" in row else row
    assert "not measured" in row and "(guard only)" in row
    assert "0.0 µs" not in row


def test_a_site_with_some_unmeasured_syncs_says_how_many() -> None:
    timed = msgspec.structs.replace(GUARD_ONLY, stall_us=12.0, stall_source="trace", signals=("trace", "guard"),
                                    ts_us=3.0)
    text = ANALYSIS_FORMATS.get("text")(_analysis(GUARD_ONLY, timed, OTHER))
    assert "1 not measured" in text


def test_json_carries_the_count() -> None:
    data = msgspec.json.decode(ANALYSIS_FORMATS.get("json")(_analysis(GUARD_ONLY, OTHER)))
    [site] = [s for s in data["call_sites"] if s["file"] == "probelib/ops.py"]
    assert site["unmeasured"] == 1 and site["count"] == 1


def test_warm_up_syncs_no_trace_event_times_say_so_in_the_totals() -> None:
    analysis = _analysis(GUARD_ONLY, OTHER)  # the probe is a warm-up sync
    assert analysis.totals.warmup == analysis.totals.warmup_unmeasured == 1
    text = ANALYSIS_FORMATS.get("text")(analysis)
    assert "1 warm-up sync (initialization, first calls, a first step's one-time cost; stall not measured: seen by " \
           "the guard only)" in " ".join(text.split())
    timed = _analysis(PROBE, OTHER)
    assert timed.totals.warmup_unmeasured == 0 and timed.totals.warmup_stall() == "4.32 ms stall"
