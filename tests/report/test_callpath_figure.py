"""The call-path icicle of a very deep stack keeps both ends and one box for what it leaves out, as the page's
lists do: a 50,000-frame stack (the hostile corpus) once made the figure's paths quadratic (11 GB, 84 s)."""

from __future__ import annotations

import msgspec
from attribute.field_probe import INFO, PROBE

from synchunt.attribute import Analysis
from synchunt.render.html.figures import callpath_figure
from synchunt.render.html.view import STACK_INNER, STACK_OUTER, build_model
from synchunt.sites import Frame


def _icicle(depth: int) -> dict:
    stack = tuple(Frame("deep.py", level + 1, f"f{level}") for level in reversed(range(depth)))  # innermost first
    sync = msgspec.structs.replace(PROBE, stack=stack)
    figure = callpath_figure(build_model(Analysis((INFO,), (sync,), {"mode": "confirmed"})))
    [icicle] = figure["data"]
    return icicle


def test_a_deep_path_keeps_both_ends_and_says_what_it_left_out() -> None:
    icicle = _icicle(5_000)
    labels = icicle["labels"]
    assert len(labels) == STACK_INNER + STACK_OUTER + 2  # the frames kept, the gap, the op
    left_out = 5_000 - STACK_INNER - STACK_OUTER
    assert f"… {left_out} frames left out" in labels
    assert labels[0] == "f0 (deep.py:1)"  # the outermost frame is the root
    assert labels[-2] == "f4999 (deep.py:5000)" and "aten::_unique2" in labels[-1]  # the innermost, then the op
    assert icicle["parents"][1:] == icicle["ids"][:-1]  # one chain, each box the child of the one before


def test_a_shallow_path_is_drawn_whole() -> None:
    icicle = _icicle(10)
    assert len(icicle["labels"]) == 11 and not any("left out" in label for label in icicle["labels"])
