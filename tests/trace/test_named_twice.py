"""A trace named twice (the same path, another spelling, a link, a folder holding it) is read once: its syncs
must not count twice, whatever a shell glob added."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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


def test_without_inodes_files_are_told_apart_by_path(tmp_path, torch_trace, monkeypatch):
    """Some file systems give every file inode 0: two traces must not be taken for one (a gate would pass)."""
    first, second = (shutil.copy(torch_trace, tmp_path / name) for name in ("a.json", "b.json"))
    real_stat = Path.stat

    def no_inode(self, *args, **kwargs):
        info = real_stat(self, *args, **kwargs)
        return os.stat_result((info.st_mode, 0, *tuple(info)[2:]))

    monkeypatch.setattr(Path, "stat", no_inode)
    assert expand([first, second, tmp_path / "." / "a.json"]) == [[first], [second]]
