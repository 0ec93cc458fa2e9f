"""Kineto JSON → columns, in one streamed read of the file.

The file is read in blocks (gzip inflated on the way); `EventSplitter` cuts the event array into slices of whole
events, each slice is decoded by msgspec into typed structs and reduced to columns at once (`decode_slice`, which
worker processes can run), and only the columns are kept: memory stays near one slice plus the columns. When the
slices do not decode (an unexpected layout) the file is decoded in one go instead. A trace cut mid-write keeps
the events before the cut and says so in ``partial``. With workers, a plain file is decoded in byte ranges, one
per process (`synchunt.trace.ranges`; local workers return their columns in a file of a temporary folder this
process removes); a gzip file's slices are handed to the workers as they are inflated.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from synchunt.errors import TraceError
from synchunt.executor import Executor, Finished, LocalExecutor, Pending
from synchunt.progress import NULL_PROGRESS, Progress
from synchunt.trace import ranges as ranges_module
from synchunt.trace import schema
from synchunt.trace.chunks import SLICE_BYTES, Ending, EventSplitter
from synchunt.trace.columns import ColumnChunk, merge, reduce_fast, reduce_loose
from synchunt.trace.schema import ALL_FIELDS, FieldSet
from synchunt.trace.slices import SliceError, decode_slice
from synchunt.trace.source import DEFAULT_MAX_BYTES, ByteStream, PartialRead, check_file, read_bytes

READ_BYTES = 1 << 20
_ONE_SHOT_ROWS = 200_000  # events reduced to columns at a time after a one-shot decode


class DecodedTrace(msgspec.Struct, frozen=True):
    """Columns of the complete events, the thread names, the file's top-level metadata."""

    columns: dict[str, Any]
    threads: list[tuple[Any, Any, str]]
    metadata: dict[str, Any]
    events: int  # events of every kind decoded
    partial: PartialRead | None = None
    # how it was decoded: "lines" (sliced), "ranges" (sliced, a byte range per process), "whole" (one slice) or
    # "one-shot"
    layout: str = "lines"
    fields: FieldSet = ALL_FIELDS  # the field set decoded


def decode(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, pool: Executor | None = None,
           progress: Progress = NULL_PROGRESS, slice_bytes: int = SLICE_BYTES,
           fields: FieldSet = ALL_FIELDS) -> DecodedTrace:
    """Decode a Kineto trace file (plain or gzip JSON, an object or a bare event array) into columns.

    ``pool`` decodes slices in parallel; ``max_bytes`` caps the uncompressed size; ``fields`` is the field set
    (all columns, or what analysis reads: `synchunt.trace.schema.FieldSet`). TraceError when unreadable.
    """
    path = Path(path)
    size = check_file(path).st_size
    pool = pool or Executor()
    try:
        with progress.task(f"read {path.name}", total=size) as task:
            ranges = ranges_module.plan(path, size, pool.workers + 1) if pool.parallel and size <= max_bytes \
                else None
            if ranges is not None:
                return _ranged(path, ranges, size, max_bytes, pool, task, slice_bytes, fields)
            return _streamed(path, max_bytes, pool, task, slice_bytes, fields)
    except SliceError:
        return _one_shot(path, read_bytes(path, max_bytes), fields)
    except RecursionError:
        raise TraceError(f"{path}: not a Kineto trace (nested too deeply)") from None


def _streamed(path: Path, max_bytes: int, pool: Executor, task: Any, slice_bytes: int,
              fields: FieldSet) -> DecodedTrace:
    # Blocks much smaller than a slice: after each cut only the tail of one block is left to move up.
    stream = ByteStream(path, max_bytes=max_bytes, block_bytes=READ_BYTES)
    return _stream_to_end(path, stream, EventSplitter(slice_bytes), pool, task, fields, [])


def _ranged(path: Path, ranges: ranges_module.RangePlan, size: int, max_bytes: int, pool: Executor, task: Any,
            slice_bytes: int, fields: FieldSet) -> DecodedTrace:
    """Every range but the last decoded by the workers, the last one here (see `synchunt.trace.ranges`)."""
    *theirs, (start, _) = ranges.ranges(size)
    # Workers on this machine hand their columns back in a file (see synchunt.trace.ranges); dask's may be
    # elsewhere, and pickle theirs.
    spill_to = _spill_folder() if isinstance(pool, LocalExecutor) else None
    try:
        earlier = [pool.submit(ranges_module.decode_range, path, a, b, ranges.boundary, fields, slice_bytes,
                               spill_to) for a, b in theirs]
        task.advance(start)  # the workers' share, counted as read: this process reads from `start` on
        stream = ByteStream(path, max_bytes=max_bytes, block_bytes=READ_BYTES, start=start)
        splitter = EventSplitter.primed(ranges.boundary, ranges.head, slice_bytes)
        return _stream_to_end(path, stream, splitter, Executor(), task, fields, earlier)
    finally:
        if spill_to is not None:
            shutil.rmtree(spill_to, ignore_errors=True)


def _spill_folder() -> str | None:
    """A private temporary folder for the workers' columns; None (pickle them) where none can be made."""
    try:
        return tempfile.mkdtemp(prefix="synchunt-ranges-")
    except OSError:
        return None


def _stream_to_end(path: Path, stream: ByteStream, splitter: EventSplitter, pool: Executor, task: Any,
                   fields: FieldSet, earlier: list[Pending]) -> DecodedTrace:
    """Decode what ``stream`` holds up to the end of the file, after the columns ``earlier`` brings back (the
    ranges before the stream's start, from workers): the metadata after the array, or what a cut leaves."""
    endings: list[Ending] = []

    def slices() -> Iterator[bytes | memoryview]:
        reported = stream.compressed_read
        with stream:
            for view in splitter.read(stream):
                task.advance(stream.compressed_read - reported)
                reported = stream.compressed_read
                yield view
        task.advance(stream.compressed_read - reported)
        ending = splitter.finish()
        endings.append(ending)
        yield from ending.slices

    chunks = _decode_slices(slices(), pool, fields)
    chunks[:0] = [chunk for pending in earlier for chunk in ranges_module.columns_of(pending.result())]
    ending = endings[0]
    if not splitter.found:
        return _one_shot(path, splitter.remainder(), fields)
    layout = "ranges" if earlier else splitter.layout
    if ending.tail is not None:
        metadata = _metadata(path, splitter.head or b"", ending.tail)
        return _assemble(chunks, metadata, None, layout, fields)
    # Cut before the array closed: keep what decodes; the last event may be whole.
    for candidate in ending.cut_candidates:
        try:
            chunks.append(decode_slice(candidate, fields))
            break
        except SliceError:
            continue
    events = sum(c.events for c in chunks)
    if events == 0:
        raise TraceError(f"{path}: not a Kineto trace (it ends before its first event)")
    reason = "the gzip stream ends early" if stream.truncated else "the JSON ends before the event list closes"
    partial = PartialRead(bytes_read=stream.bytes_read, events_read=events, reason=reason)
    head = splitter.head or b""
    metadata = _metadata(path, head, b"}", strict=False) if head else {}
    return _assemble(chunks, metadata, partial, layout, fields)


def _decode_slices(slices: Iterator[bytes | memoryview], pool: Executor, fields: FieldSet) -> list[ColumnChunk]:
    """Every slice's columns, in order. With workers, a slice goes to a worker when one is free, else this
    process decodes it (where it lies, while the workers run): no core waits on another, and a slow worker
    only means more slices decoded here."""
    if not pool.parallel:
        return [decode_slice(payload, fields) for payload in slices]
    pending: deque[Pending] = deque()
    chunks: list[ColumnChunk] = []
    for payload in slices:
        if sum(not p.done() for p in pending) < pool.workers:
            pending.append(pool.submit(decode_slice, bytes(payload), fields))  # a worker needs its own copy
        else:
            pending.append(Finished(decode_slice(payload, fields)))
        while pending and pending[0].done():
            chunks.append(pending.popleft().result())
    chunks.extend(p.result() for p in pending)
    return chunks


def _metadata(path: Path, head: bytes, tail: bytes, strict: bool = True) -> dict[str, Any]:
    if not head:  # a bare event array: nothing but whitespace may follow it
        if tail.strip() and strict:
            raise TraceError(f"{path}: not a Kineto trace (data after the event array)")
        return {}
    try:
        return schema.metadata_of(schema.METADATA_DECODER.decode(head + b"[]" + tail))
    except msgspec.DecodeError as error:
        if strict:
            raise TraceError(f"{path}: not a Kineto trace ({error})") from None
        return {}


def _one_shot(path: Path, data: bytes, fields: FieldSet = ALL_FIELDS) -> DecodedTrace:
    """The whole file at once: for layouts the splitter does not know (and for the precise error message)."""
    bare = data.lstrip()[:1] == b"["
    fast = schema.FAST_EVENTS_DECODERS[fields.name] if bare else schema.FAST_FILE_DECODERS[fields.name]
    loose = schema.LOOSE_EVENTS_DECODER if bare else schema.LOOSE_FILE_DECODER
    try:
        try:
            parsed, reduce = fast.decode(data), reduce_fast
        except msgspec.ValidationError:
            parsed, reduce = loose.decode(data), reduce_loose
    except msgspec.DecodeError as error:
        raise TraceError(f"{path}: not a Kineto trace ({error})") from None
    except RecursionError:
        raise TraceError(f"{path}: not a Kineto trace (nested too deeply)") from None
    del data
    events = parsed if bare else parsed.traceEvents
    if events is None:
        raise TraceError(f"{path}: not a Kineto trace (no traceEvents)")
    metadata = {} if bare else schema.metadata_of(parsed)
    chunks = [reduce(events[start:start + _ONE_SHOT_ROWS], fields) for start in range(0, len(events), _ONE_SHOT_ROWS)]
    return _assemble(chunks, metadata, None, "one-shot", fields)


def _assemble(chunks: list[ColumnChunk], metadata: dict[str, Any], partial: PartialRead | None,
              layout: str, fields: FieldSet) -> DecodedTrace:
    threads = [row for chunk in chunks for row in chunk.threads]
    events = sum(c.events for c in chunks)
    return DecodedTrace(columns=merge(chunks, fields), threads=threads, metadata=metadata, events=events,
                        partial=partial, layout=layout, fields=fields)
