"""Every plain trace file of the hostile corpus decodes in byte ranges exactly as it does streamed: the same
columns, threads, metadata and partial read, or the same error. Ranges are forced onto these small files (no
minimum share, a short window), so each file that can be cut is cut, often inside what the mutation broke."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import numpy as np
from trust_support import CORPUS

from synchunt.errors import TraceError
from synchunt.executor import LocalExecutor
from synchunt.trace import ranges
from synchunt.trace.decode import decode

MAX_FILE_BYTES = 128 << 10  # the few bigger files repeat the small ones at length


def _plain_traces(root: Path) -> list[bytes]:
    """The distinct plain (not gzip) .json files the light cases write, each once."""
    seen: dict[str, bytes] = {}
    for index, case in enumerate(c for c in CORPUS.values() if not c.heavy):
        folder = root / str(index)
        folder.mkdir()
        try:
            case.build(folder)
        except OSError:
            continue
        for path in folder.rglob("*.json"):
            if path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_FILE_BYTES:
                data = path.read_bytes()
                if data[:2] != b"\x1f\x8b":
                    seen.setdefault(hashlib.sha256(data).hexdigest(), data)
    return list(seen.values())


def _outcome(path: Path, **options) -> tuple:
    try:
        decoded = decode(path, **options)
    except TraceError as error:
        return ("error", str(error)), None
    columns = {key: (value.tolist() if isinstance(value, np.ndarray) else (value[0].tolist(), value[1]))
               for key, value in decoded.columns.items()}
    floats = {key for key, value in decoded.columns.items() if isinstance(value, np.ndarray)
              and value.dtype.kind == "f"}
    for key in floats:  # NaN == NaN for the comparison
        columns[key] = [repr(v) for v in columns[key]]
    return ("decoded", decoded.events, decoded.threads, decoded.metadata, decoded.partial, columns), decoded.layout


def test_every_plain_hostile_trace_decodes_the_same_in_ranges(tmp_path, monkeypatch):
    monkeypatch.setattr(ranges, "MIN_RANGE_BYTES", 0)
    monkeypatch.setattr(ranges, "WINDOW_BYTES", 256)
    with tempfile.TemporaryDirectory(dir=tmp_path) as built:
        traces = _plain_traces(Path(built))
    assert len(traces) > 300
    cut = 0
    with LocalExecutor(1) as pool:
        for number, data in enumerate(traces):
            path = tmp_path / f"{number}.json"
            path.write_bytes(data)
            streamed, _ = _outcome(path, slice_bytes=512)
            ranged, layout = _outcome(path, slice_bytes=512, pool=pool)
            assert ranged == streamed, f"{path}: {ranged[:2]} != {streamed[:2]}"
            cut += layout == "ranges"
            path.unlink()
    assert cut > 100  # most files were decoded in ranges, not streamed for want of a cut
