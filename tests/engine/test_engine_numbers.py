"""Numbers a trace can hold that no real one does: ranks, line numbers and scope counters of thousands of digits,
durations of centuries. Each is read as unknown or as text, never crashes a stage or overflows a total."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synchunt.attribute import analyze
from synchunt.render.analysis.text import render_text
from synchunt.sites import Frame, compress_scopes, natural_key
from synchunt.trace.model import _rank_number


@pytest.mark.parametrize(("value", "rank"), [
    (0, 0), (7, 7), ("12", 12), (3.0, 3), ("1" * 5000, None), (10**5000, None), (-1, None), (2.5, None),
    (True, None), ("٣", None), ([1], None), (1 << 40, None),
], ids=lambda value: type(value).__name__ if isinstance(value, int) and value > 10**20 else repr(value)[:20])
def test_a_rank_is_a_plausible_non_negative_integer_or_unknown(value, rank) -> None:
    assert _rank_number(value) == rank


def test_a_line_number_too_long_to_be_one_is_unknown() -> None:
    assert Frame.from_kineto_name("model.py(12): forward") == Frame("model.py", 12, "forward")
    assert Frame.from_kineto_name("model.py(" + "9" * 400 + "): forward") == Frame("model.py", 0, "forward")


def test_natural_order_never_compares_a_number_with_text() -> None:
    names = ["layer_10", "layer_2", "layer_" + "1" * 5000, "layer_x", "layer_"]
    ordered = sorted(names, key=natural_key)
    assert ordered[:3] == ["layer_", "layer_2", "layer_10"]
    assert compress_scopes({name: 1 for name in names})  # ranges of counters, whatever their length


def _trace(path: Path, events: list[dict], **top: object) -> Path:
    path.write_text(json.dumps({"traceEvents": events, **top}))
    return path


def test_a_stall_of_centuries_does_not_overflow_the_totals(tmp_path: Path) -> None:
    def nonzero(ts: float, dur: float) -> dict:
        return {"ph": "X", "cat": "cpu_op", "name": "aten::nonzero", "pid": 1, "tid": 1, "ts": ts, "dur": dur}

    analysis = analyze(_trace(tmp_path / "t.json", [nonzero(0, 1e308), nonzero(10, 1e308), nonzero(20, 5)],
                              distributedInfo={"rank": "1" * 5000}))
    assert [sync.stall_us for sync in analysis.records] == [0.0, 0.0, 5.0]
    assert analysis.totals.stall_us == 5.0 and analysis.traces[0].rank is None
    text = render_text(analysis)
    assert "inf" not in text and "nan" not in text
