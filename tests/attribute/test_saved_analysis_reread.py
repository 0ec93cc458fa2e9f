"""A saved analysis is read anew each time it is given: nothing about it (size, modification time) is trusted to
mean that it is unchanged."""

from __future__ import annotations

import os

import synchunt
from synchunt.attribute.document import encode
from tests.trace.conftest import kineto_layout, many_events


def test_a_saved_analysis_edited_with_its_size_and_mtime_kept_gives_the_new_content(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_bytes(kineto_layout(many_events(21)))
    saved = tmp_path / "analysis.json"
    saved.write_bytes(encode(synchunt.analyze(trace)))
    first = synchunt.analyze(saved)
    assert first.traces[0].path.endswith("t.json") and first.totals.syncs == 3
    stat = saved.stat()
    saved.write_bytes(saved.read_bytes().replace(b't.json"', b'u.json"'))
    os.utime(saved, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert saved.stat().st_size == stat.st_size and saved.stat().st_mtime_ns == stat.st_mtime_ns
    again = synchunt.analyze(saved)
    assert again.traces[0].path.endswith("u.json")
    assert {record.trace for record in again.records} == {again.traces[0].path}
