"""Loading traces from files and per-rank folders."""

from __future__ import annotations

from pathlib import Path

from synchunt.errors import TraceError
from synchunt.trace.decode import decode
from synchunt.trace.model import Trace, build

TRACE_SUFFIXES = (".json", ".json.gz")


def load_trace(path: str | Path) -> Trace:
    """Parse one Kineto trace (``.json`` or ``.json.gz``, or a folder holding exactly one).

    Raises :class:`synchunt.errors.TraceError` for anything that is not a readable trace.
    """
    path = Path(path)
    if path.is_dir():
        files = trace_files(path)
        if len(files) != 1:
            raise TraceError(f"{path} holds {len(files)} traces; use load_traces() for per-rank folders")
        path = files[0]
    if not path.exists():
        raise TraceError(f"no such trace: {path}")
    return build(path, decode(path))


def load_traces(paths: list[str | Path] | tuple[str | Path, ...]) -> list[Trace]:
    """Parse every trace named, expanding folders of per-rank traces (sorted by rank, then name)."""
    if not paths:
        raise TraceError("no trace given")
    traces: list[Trace] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = trace_files(path)
            if not files:
                raise TraceError(f"{path} holds no .json or .json.gz trace")
            loaded = [build(f, decode(f)) for f in files]
            loaded.sort(key=lambda t: (t.rank if t.rank is not None else 1 << 30, t.path.name))
            traces.extend(loaded)
        elif path.exists():
            traces.append(build(path, decode(path)))
        else:
            raise TraceError(f"no such trace: {path}")
    return traces


def trace_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(TRACE_SUFFIXES))
