"""A trace named twice (the same path, another spelling, a link, a folder holding it) is read once: its syncs
must not count twice, whatever a shell glob added."""

from __future__ import annotations

import os
import shutil

import synchunt
from synchunt.trace.load import expand


def test_one_file_named_many_ways_is_read_once(tmp_path, torch_trace):
    folder = tmp_path / "run"
    folder.mkdir()
    trace = shutil.copy(torch_trace, folder / "rank0.json")
    (folder / "link.json").symlink_to(trace)
    os.link(trace, tmp_path / "hard.json")
    other = shutil.copy(torch_trace, tmp_path / "copy.json")  # another file with the same bytes: a trace of its own
    named = [trace, str(trace), folder / ".." / "run" / "rank0.json", folder, tmp_path / "hard.json", other]
    assert expand(named) == [[trace], [other]]
    once = synchunt.analyze(trace)
    assert once.records
    assert len(synchunt.analyze(named[:5]).records) == len(once.records)
    assert len(synchunt.analyze([trace, other]).records) == 2 * len(once.records)
