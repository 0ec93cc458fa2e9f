"""Content digests computed ahead (`synchunt.digests.prefetch`) are the files' own, and are used only while the
file is the one that was hashed; the command line hands `analyze`'s trace files to them before it loads numpy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from synchunt import digests
from synchunt.cli import prefetch as cli_prefetch
from synchunt.trace import load
from tests.trace.conftest import kineto_layout, many_events


def _prefetched(path) -> None:
    thread = digests.prefetch([path])
    assert thread is not None
    thread.join()


def test_a_prefetched_digest_is_the_files_own_and_is_used_once(tmp_path, monkeypatch):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(300)))
    expected = digests._hash(path)
    _prefetched(path)
    hashed = []
    original = digests._hash
    monkeypatch.setattr(digests, "_hash", lambda p: hashed.append(p) or original(p))
    assert digests.content_digest(path) == expected and hashed == []  # the prefetched one
    assert digests.content_digest(path) == expected and hashed == [path]  # used once: hashed anew


def test_a_file_written_after_its_prefetch_is_hashed_anew(tmp_path):
    """Same length, modification time put back: the change time still tells, and the digest is the new bytes'."""
    path = tmp_path / "t.json"
    data = kineto_layout(many_events(300))
    path.write_bytes(data)
    _prefetched(path)
    before = path.stat()
    changed = data.replace(b"aten::add", b"aten::mul", 1)
    path.write_bytes(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert digests.content_digest(path) == _digest_of(tmp_path, changed) != _digest_of(tmp_path, data)


def _digest_of(folder, data: bytes) -> str:
    other = folder / "copy.json"
    other.write_bytes(data)
    return digests._hash(other)


def test_what_cannot_be_hashed_is_left_to_the_caller(tmp_path):
    assert digests.prefetch([tmp_path / "missing.json", tmp_path]) is None
    with pytest.raises(OSError):
        digests.content_digest(tmp_path / "missing.json")


@pytest.mark.parametrize(("arguments", "hashed"), [
    (["t.json", "--output", "o.json", "r.json.gz", "--mode", "latent"], ["t.json", "r.json.gz"]),
    (["t.json", "-o", "o.json", "--format", "json"], ["t.json"]),
    (["t.json", "notes.txt", "--cache-dir", "c"], ["t.json"]),
    (["t.json", "--no-cache"], None),  # no cache: no digest wanted
    (["t.json", "--workers=2"], None),  # workers: no thread beside a fork
    (["t.json", "--workers", "2"], None),
    (["t.json", "--executor", "dask"], None),
])
def test_analyze_hands_its_trace_files_to_the_prefetch(monkeypatch, tmp_path, arguments, hashed):
    monkeypatch.setenv("SYNCHUNT_CACHE_DIR", str(tmp_path / "default"))
    seen = []
    monkeypatch.setattr(cli_prefetch, "prefetch", lambda paths, memo: seen.append((paths, memo)))
    cli_prefetch.prefetch_trace_digests(arguments)
    memo = Path("c" if "--cache-dir" in arguments else tmp_path / "default") / "digests"
    assert seen == ([(hashed, memo)] if hashed else [])


def test_the_prefetch_reads_the_cache_folder_as_typer_does(monkeypatch):
    seen = []
    monkeypatch.setattr(cli_prefetch, "prefetch", lambda paths, memo: seen.append(memo))
    cli_prefetch.prefetch_trace_digests(["t.json", "--cache-dir=first", "--cache-dir", "last"])
    assert seen == [Path("last") / "digests"]


# -- remembered digests ------------------------------------------------------------------------------------------

@pytest.fixture
def settled(monkeypatch):
    """Files count as settled at once (else a file must be 2 s old before its digest is remembered)."""
    monkeypatch.setattr(digests, "SETTLED_NS", 0)


def _hashing_fails(monkeypatch):
    def refuse(path):
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr(digests, "_hash", refuse)


def test_a_remembered_digest_is_taken_without_reading_the_file(tmp_path, settled, monkeypatch):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(300)))
    memo = tmp_path / "memo"
    expected = digests.content_digest(path, memo)
    assert expected == digests._hash(path) and digests.recall(memo, path) == expected
    _hashing_fails(monkeypatch)
    assert digests.content_digest(path, memo) == expected
    assert digests.prefetch([path], memo) is None  # nothing to read ahead either


def test_a_file_written_since_is_hashed_anew_though_its_size_and_mtime_are_put_back(tmp_path, settled):
    path = tmp_path / "t.json"
    data = kineto_layout(many_events(300))
    path.write_bytes(data)
    memo = tmp_path / "memo"
    old = digests.content_digest(path, memo)
    before = path.stat()
    changed = data.replace(b"aten::add", b"aten::mul", 1)
    path.write_bytes(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert digests.recall(memo, path) is None
    assert digests.content_digest(path, memo) == _digest_of(tmp_path, changed) != old


def test_a_file_changed_moments_before_its_hashing_is_not_remembered(tmp_path):
    """Within the settling time a second write could keep the times of the first: hash it every time."""
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(300)))
    memo = tmp_path / "memo"
    digests.content_digest(path, memo)
    assert digests.recall(memo, path) is None and not memo.exists()


def test_a_prefetched_digest_is_remembered(tmp_path, settled, monkeypatch):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(300)))
    memo = tmp_path / "memo"
    thread = digests.prefetch([path], memo)
    assert thread is not None
    thread.join()
    expected = digests.content_digest(path, memo)
    _hashing_fails(monkeypatch)
    assert digests.content_digest(path, memo) == expected


@pytest.mark.parametrize("content", ["", "garbage", "1 2 3 4 5", "1 2 3 4 x digest", "\xff\xfe", "\u00b2 2 3 4 5 d",
                                     "9" * 5000 + " 2 3 4 5 d", "IDENTITY ../../escaped"])
def test_a_broken_memo_is_a_miss(tmp_path, settled, content):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(30)))
    memo = tmp_path / "memo"
    digests.content_digest(path, memo)
    (entry,) = memo.iterdir()
    entry.write_text(content.replace("IDENTITY", " ".join(map(str, digests.identity(path)))), errors="surrogateescape")
    assert digests.recall(memo, path) is None
    assert digests.prefetch([path], memo) is not None  # hashed again, no traceback
    assert digests.content_digest(path, memo) == digests._hash(path)


def test_an_unwritable_memo_is_ignored(tmp_path, settled):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(30)))
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert digests.content_digest(path, blocker / "memo") == digests._hash(path)


def test_the_memo_keeps_the_most_recent_digests(tmp_path, settled, monkeypatch):
    monkeypatch.setattr(digests, "MEMO_FILES", 3)
    memo = tmp_path / "memo"
    paths = []
    for index in range(5):
        path = tmp_path / f"t{index}.json"
        path.write_bytes(kineto_layout(many_events(10 + index)))
        digests.content_digest(path, memo)
        paths.append(path)
        os.utime(next(memo.glob(digests._memo_name(path, digests.identity(path)))), ns=(index, index))
    assert len(list(memo.iterdir())) == 3
    assert [digests.recall(memo, path) is not None for path in paths] == [False, False, True, True, True]


def test_a_cached_reanalysis_does_not_read_the_trace(tmp_path, settled, monkeypatch):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(40)))
    options = load.LoadOptions(cache=True, cache_dir=tmp_path / "c")
    first = load.load_trace(path, options)
    _hashing_fails(monkeypatch)
    assert len(load.load_trace(path, options).events) == len(first.events)


def test_the_command_line_knows_the_trace_suffixes():
    assert cli_prefetch.TRACE_SUFFIXES == load.TRACE_SUFFIXES


def test_a_cached_analyze_from_the_console_script_gives_the_first_result(tmp_path):
    """The console script's cached run (its digest prefetched) prints what the first run printed, and loads no
    process pool's modules."""
    trace = tmp_path / "t.json"
    trace.write_bytes(kineto_layout(many_events(200)))
    code = ("import json, sys; from synchunt.cli import entry\n"
            "try:\n    entry()\nexcept SystemExit as done:\n    assert not done.code, done.code\n"
            "sys.stderr.write(json.dumps('concurrent.futures' in sys.modules))")
    outputs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code, "analyze", str(trace), "--format", "json",
                               "--cache-dir", str(tmp_path / "cache")], capture_output=True, text=True, check=True)
        assert done.stderr.strip().splitlines()[-1] == "false"
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1] and len(list((tmp_path / "cache").iterdir())) == 1
