"""The decoded-trace cache: hits give the same trace, any change to the file or to synchunt misses."""

from __future__ import annotations

import os

import synchunt
from synchunt.trace import LoadOptions, load_trace
from synchunt.trace import cache as cache_module
from synchunt.trace.cache import TraceCache, default_cache_dir
from tests.trace.conftest import kineto_layout, many_events, op
from tests.trace.test_trace_chunks import assert_same_events


def _options(folder):
    return LoadOptions(cache=True, cache_dir=folder)


def _entries(folder):
    return sorted(folder.glob("*.columns"))


def test_hit_returns_the_same_trace(tmp_path, torch_trace):
    folder = tmp_path / "cache"
    first = load_trace(torch_trace, _options(folder))
    assert len(_entries(folder)) == 1
    second = load_trace(torch_trace, _options(folder))
    assert_same_events(first.events, second.events)
    assert first.threads.equals(second.threads) and first.metadata == second.metadata
    assert synchunt.analyze(first).to_json() == synchunt.analyze(second).to_json()
    assert str(second.path) == str(torch_trace)


def test_string_ids_and_partial_survive_the_cache(tmp_path):
    events = [*many_events(30), op("PyTorch Profiler (0)", 0, 1, cat="Trace", pid="Spans", tid="PyTorch Profiler")]
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(events)[:-400])
    first = load_trace(path, _options(tmp_path / "c"))
    second = load_trace(path, _options(tmp_path / "c"))
    assert second.partial == first.partial and first.partial is not None
    assert second.events["pid"].tolist() == first.events["pid"].tolist()


def test_touch_or_copy_hits_and_other_content_or_version_misses(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(20)))
    store = TraceCache(folder)
    load_trace(path, _options(folder))
    key = store.entry(path)
    assert key.exists()
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # touched: the same bytes
    assert store.entry(path) == key and store.get(path) is not None
    copy = tmp_path / "elsewhere.json"
    copy.write_bytes(path.read_bytes())
    assert store.entry(copy) == key and str(store.get(copy).path) == str(copy)
    path.write_bytes(kineto_layout(many_events(21)))  # other content, other size
    assert store.get(path) is None
    assert len(load_trace(path, _options(folder)).events) == 63
    monkeypatch.setattr(cache_module, "CACHE_FORMAT", cache_module.CACHE_FORMAT + "-other")
    assert store.get(path) is None
    monkeypatch.setattr(synchunt, "__version__", "999")
    assert store.entry(path).name not in {p.name for p in _entries(folder)}


def test_same_size_and_mtime_but_other_content_misses(tmp_path):
    path = tmp_path / "t.json"
    data = kineto_layout(many_events(20))
    path.write_bytes(data)
    store = TraceCache(tmp_path / "c")
    load_trace(path, _options(tmp_path / "c"))
    stat = path.stat()
    path.write_bytes(data.replace(b"aten::add", b"aten::mul"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert store.get(path) is None


def _same_length_edit(path, old: bytes, new: bytes, at: float) -> None:
    """Replace the first ``old`` past ``at`` (a fraction of the file) by ``new`` in place, keeping size and times."""
    assert len(old) == len(new)
    stat = path.stat()
    data = bytearray(path.read_bytes())
    position = data.index(old, int(len(data) * at))
    data[position:position + len(old)] = new
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns


def test_one_event_changed_mid_file_with_size_and_mtime_restored_gets_the_new_result(tmp_path):
    """A large trace (beyond any sampled window: 16 MB) with one op renamed in the middle, to a name of the
    same length, its size and modification time restored: the cached analysis is the new one."""
    path = tmp_path / "big.json"
    path.write_bytes(kineto_layout(many_events(40_000)))
    assert path.stat().st_size > 16 << 20
    folder = tmp_path / "c"
    before = synchunt.analyze(path, load=_options(folder)).totals.syncs
    assert synchunt.analyze(path, load=_options(folder)).totals.syncs == before  # a hit: the same
    _same_length_edit(path, b'"aten::nonzero"', b'"aten::nonzerX"', at=0.5)
    after = synchunt.analyze(path, load=_options(folder)).totals.syncs
    assert after == synchunt.analyze(path).totals.syncs == before - 1
    assert len(_entries(folder)) == 2


def test_no_entry_is_stored_when_the_file_changes_during_its_decode(tmp_path, monkeypatch):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(20)))
    folder = tmp_path / "c"
    from synchunt.trace import load as load_module

    decoded = load_module._decoded

    def rewritten_meanwhile(*args, **kwargs):
        trace = decoded(*args, **kwargs)
        _same_length_edit(path, b"aten::add", b"aten::mul", at=0.5)
        return trace

    monkeypatch.setattr(load_module, "_decoded", rewritten_meanwhile)
    load_trace(path, _options(folder))
    assert _entries(folder) == []


def test_broken_entry_is_a_miss_and_unwritable_folder_is_ignored(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(5)))
    store = TraceCache(tmp_path / "c")
    load_trace(path, _options(tmp_path / "c"))
    store.entry(path).write_bytes(b"not an entry")
    assert store.get(path) is None
    assert len(load_trace(path, _options(tmp_path / "c")).events) == 15
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert len(load_trace(path, _options(blocker / "sub")).events) == 15  # the cache folder cannot exist


def test_default_folder_is_the_user_cache_not_the_trace_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("SYNCHUNT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "synchunt" / "traces"
    monkeypatch.setenv("SYNCHUNT_CACHE_DIR", str(tmp_path / "mine"))
    trace_dir = tmp_path / "traces"
    trace_dir.mkdir()
    path = trace_dir / "t.json"
    path.write_bytes(kineto_layout(many_events(5)))
    load_trace(path, LoadOptions(cache=True))
    assert list(trace_dir.iterdir()) == [path] and len(_entries(tmp_path / "mine")) == 1


def test_prune_keeps_the_newest_entries(tmp_path):
    folder = tmp_path / "c"
    paths = []
    for i in range(3):
        path = tmp_path / f"t{i}.json"
        path.write_bytes(kineto_layout(many_events(50 + i)))
        paths.append(path)
    store = TraceCache(folder, max_bytes=1)
    for path in paths:
        load_trace(path, _options(folder))
        store.put(load_trace(path))
    assert [p.name for p in _entries(folder)] == [store.entry(paths[-1]).name]


def test_guard_records_kept_in_the_trace_are_read_anew_when_they_change(tmp_path):
    """The guard pass's records live in the trace's top-level ``synchunt`` key: covered by the content hash, so an
    edited record (same size, same modification time) is never served from the cache."""
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(many_events(20), synchunt={"guard": {"records": [{"rule": "SH101", "line": 13}]}}))
    folder = tmp_path / "c"
    assert load_trace(path, _options(folder)).metadata["synchunt"]["guard"]["records"][0]["line"] == 13
    assert load_trace(path, _options(folder)).metadata["synchunt"]["guard"]["records"][0]["line"] == 13  # a hit
    _same_length_edit(path, b'"line": 13', b'"line": 31', at=0.0)
    assert load_trace(path, _options(folder)).metadata["synchunt"]["guard"]["records"][0]["line"] == 31


def test_the_format_version_follows_the_column_list(monkeypatch):
    """No number to bump by hand: another column list (or header) is another format, so older entries miss."""
    from synchunt.trace import table

    assert cache_module._entry_format() == cache_module.CACHE_FORMAT
    monkeypatch.setattr(cache_module, "COLUMNS", (*table.COLUMNS, table.Column("queue", "int", "queue")))
    assert cache_module._entry_format() != cache_module.CACHE_FORMAT
