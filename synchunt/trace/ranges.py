"""One plain trace file decoded by several processes, each reading its own byte range of the event array.

Handing slices to workers costs this process their bytes (copied, pickled, written to a pipe by a helper
thread that waits for the GIL while this process decodes). Here nothing but a range's bounds goes out: the
head of the file gives the layout (`EventSplitter`: an event starts at newline + the events' indent + ``{``),
the array is cut at the first event start past each equal share, and each worker reads, slices and decodes
its range on its own; this process decodes the last range, which holds the array's end (the metadata after
it, or the cut of a trace written half-way). A range whose slices do not decode raises `SliceError`, and the
file is then decoded in one go, as when streamed.

The columns come back the same way: a worker on this machine writes their arrays to a file in a folder this
process made (`Spilled`: pickle's out-of-band buffers, one write) and returns only their layout, and this
process maps that file (copy on write) instead of reading it. A pickled result instead crosses a pipe that this
process's result thread drains in pieces between the GIL switches of the decode running here: tens of
milliseconds after the worker is done, for 20 MB of columns. A worker that cannot write the file returns the
columns pickled.
"""

from __future__ import annotations

import itertools
import mmap
import os
import pickle
from pathlib import Path

import msgspec

from synchunt.trace.chunks import SLICE_BYTES, EventSplitter
from synchunt.trace.columns import ColumnChunk
from synchunt.trace.schema import ALL_FIELDS, FieldSet
from synchunt.trace.slices import decode_slice
from synchunt.trace.source import ByteStream, head_bytes, is_gzip_magic

WINDOW_BYTES = 1 << 20  # how far past a share's end an event start is looked for (and the head read)
MIN_RANGE_BYTES = 4 << 20  # below this a range is not worth a process


class RangePlan(msgspec.Struct, frozen=True):
    """Where the event array's events start, the layout, and the cuts between the ranges (event starts)."""

    head: bytes  # the file's bytes before the event array's ``[``
    boundary: bytes  # newline + indent + ``{``
    starts: tuple[int, ...]  # each range's first byte: the first event, then one cut per range after it

    def ranges(self, size: int) -> list[tuple[int, int]]:
        """(start, stop) of every range, the last ending at the end of the file."""
        return list(zip(self.starts, (*self.starts[1:], size), strict=True))


def plan(path: Path, size: int, parts: int) -> RangePlan | None:
    """Cut the file's event array into ``parts`` ranges of about equal size, or None when it cannot be cut so
    (gzip, a bare array, an unknown layout, no event start near a cut, ranges too small)."""
    if parts < 2 or size < parts * MIN_RANGE_BYTES:
        return None
    head = head_bytes(path, WINDOW_BYTES, decompress=False)
    if is_gzip_magic(head):
        return None
    splitter = EventSplitter()
    list(splitter.views(head))
    if not splitter.found or splitter.boundary is None or not splitter.head:
        return None
    first = len(splitter.head) + 1  # just past the array's '['
    starts = [first]
    with path.open("rb") as handle:
        for k in range(1, parts):
            share = first + (size - first) * k // parts
            handle.seek(share)
            found = handle.read(WINDOW_BYTES).find(splitter.boundary)
            if found < 0 or share + found <= starts[-1]:
                return None
            starts.append(share + found)
    return RangePlan(splitter.head, splitter.boundary, tuple(starts))


class Spilled(msgspec.Struct, frozen=True):
    """A range's columns written to ``path``: the pickle of the chunks without their arrays, and the arrays'
    sizes in the order pickle asks for them."""

    path: str
    head: bytes
    sizes: tuple[int, ...]


def decode_range(path: Path, start: int, stop: int, boundary: bytes, fields: FieldSet = ALL_FIELDS,
                 slice_bytes: int = SLICE_BYTES, spill_to: str | None = None) -> list[ColumnChunk] | Spilled:
    """The columns of the whole events in [start, stop), which starts where an event does and ends where the
    next range's first event does; with ``spill_to`` (a folder), written to a file there (`Spilled`).
    Module-level: worker processes run it."""
    splitter = EventSplitter.primed(boundary, slice_bytes=slice_bytes)
    with ByteStream(path, block_bytes=WINDOW_BYTES, start=start, stop=stop) as stream:
        chunks = [decode_slice(view, fields) for view in splitter.read(stream)]
    rest = splitter.rest()
    if rest is not None:
        chunks.append(decode_slice(rest, fields))
    if spill_to is None:
        return chunks
    return _spill(chunks, os.path.join(spill_to, f"range-{start}.columns"))


def _spill(chunks: list[ColumnChunk], target: str) -> list[ColumnChunk] | Spilled:
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(chunks, protocol=5, buffer_callback=buffers.append)
    views = [buffer.raw() for buffer in buffers]
    try:
        with open(target, "wb") as handle:
            for view in views:
                handle.write(view)
    except OSError:  # no room, or the folder is gone: the pipe it is
        return chunks
    return Spilled(target, head, tuple(view.nbytes for view in views))


def columns_of(result: list[ColumnChunk] | Spilled) -> list[ColumnChunk]:
    """A range's columns as `decode_range` returned them; a spilled file is mapped (copy on write: writable
    arrays, no read of the whole file into a fresh buffer) and removed. The file is this process's own, in its
    private folder: nothing truncates it under the mapping."""
    if not isinstance(result, Spilled):
        return result
    total = sum(result.sizes)
    with open(result.path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size != total:
            raise OSError(f"{result.path}: {size} bytes where {total} were written")
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY) if total else bytearray()
    os.unlink(result.path)
    view = memoryview(data)
    offsets = [0, *itertools.accumulate(result.sizes)]
    return pickle.loads(result.head, buffers=[view[a:b] for a, b in itertools.pairwise(offsets)])
