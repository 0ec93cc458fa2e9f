"""Host reads inside a reviewed torch function whose tensor lives in host memory by design: set aside, as the
runtime guard does (``synchunt.rules.reviewed.NOT_HOST_SYNC_CALLS``), so both signals count the same syncs."""

from __future__ import annotations

from functools import cache

import numpy as np

from synchunt.detect.columns import Columns
from synchunt.detect.merge import Candidate
from synchunt.rules import NOT_HOST_SYNC_CALLS
from synchunt.rules.reviewed import NotAHostSyncCall
from synchunt.sites import Frame
from synchunt.trace import vocab


def split_reviewed_calls(candidates: list[Candidate], columns: Columns
                         ) -> tuple[list[Candidate], list[tuple[Candidate, NotAHostSyncCall]]]:
    """(the candidates kept, those under a reviewed call's frame with that call). Needs Python frames in the
    trace (``with_stack``); without them nothing is set aside."""
    if not candidates:
        return candidates, []
    kept: list[Candidate] = []
    aside: list[tuple[Candidate, NotAHostSyncCall]] = []
    reviewed = cache(lambda cls: _reviewed_frame(columns.classes.links(cls)))
    events = np.fromiter((candidate.event for candidate in candidates), dtype=np.int64, count=len(candidates))
    for candidate, cls in zip(candidates, columns.classes.of(events).tolist(), strict=True):
        call = reviewed(cls)
        if call is None:
            kept.append(candidate)
        else:
            aside.append((candidate, call))
    return kept, aside


def _reviewed_frame(links: tuple[tuple[str, str], ...]) -> NotAHostSyncCall | None:
    """The reviewed call among the chain's Python frames, if any (the guard quiets everything under it)."""
    for name, category in links:
        if category != vocab.PYTHON_FUNCTION:
            continue
        frame = Frame.from_kineto_name(name)
        if frame is None or not frame.function:
            continue
        for call in NOT_HOST_SYNC_CALLS:
            if call.names_frame(frame.file, frame.function):
                return call
    return None
