"""Cutting a streamed trace's event array into slices of whole events, without parsing it.

Kineto (torch's writer) starts every top-level event on its own line at one fixed indent, and JSON strings
cannot hold a raw newline, so newline + that indent + ``{`` occurs only where an event starts. The splitter
learns the indent from the first event and cuts there; a slice that does not decode means the layout differs
(the caller then decodes the file in one go). When the first event does not start a line (a one-line file),
the whole array is one slice.

Why the cut follows the writer's layout rather than JSON itself: a cut must be found without parsing, and bytes
alone do not tell an event's start from any other object's. ``},{`` (or ``}, {``) also separates the objects of
a list in an event's arguments and in the metadata after the array (``deviceProperties``, synchunt's guard
records), so a layout-free cut either misplaces the array's end (a record taken for an event) or needs each
byte's string and nesting state, which costs more than decoding the bytes (a vectorised numpy pass over quotes,
escapes and braces took 0.8 s per 8 MiB slice where msgspec decodes one in about 0.08 s). The learned indent
cuts only where the writer started an event, and every cut is still checked by decoding the slice: a layout
this rule does not fit (an object at the events' indent inside an event) fails to decode and the file is
decoded in one go, never misread. Layouts tested: Kineto's (torch's writer), ``json.dumps`` with indent 1, 2, 4
and a tab, one line (compact: one slice), a bare array, and each of them cut mid-write.

`views` hands out each slice as a view into the splitter's buffer, made a JSON array in place (the whitespace
before the first event becomes ``[``, the comma after the last ``]``): decoding in this process copies nothing.
A view is valid until the next one is asked for, and nothing should keep a reference into it (msgspec's ``Raw``
values must be turned into bytes first); when something does, the splitter leaves that buffer to it and goes on
in a copy. The buffer keeps its size from slice to slice (what follows the last cut moves to its front), and a
source can read straight into its free end (`space`, then `commit`): a buffer shrunk after each slice and grown
again block by block cost more than the reads (the allocator's copies and fresh pages).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import msgspec

from synchunt.trace.schema import METADATA_DECODER

if TYPE_CHECKING:
    from synchunt.trace.source import ByteStream

SLICE_BYTES = 8 << 20
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"
# The array's end is found from the file's end: each ``]`` back from it is tried by decoding the metadata around
# it (a ``]`` in the metadata after the array, a list or a string, fails). Kineto's tail has a few; past 64 the
# file is taken as cut mid-write, which still keeps every whole event.
_MAX_CLOSE_TRIES = 64


class Ending(msgspec.Struct):
    """What follows the last full slice once the stream has ended."""

    slices: list[bytes]  # whole-event JSON arrays still to decode
    tail: bytes | None  # the bytes after the array's closing bracket; None when the stream was cut before it
    cut_candidates: Iterator[bytes] = msgspec.field(default_factory=lambda: iter(()))  # when cut: the events before it


class EventSplitter:
    """Feed the uncompressed bytes block by block; get back JSON arrays of whole events."""

    def __init__(self, slice_bytes: int = SLICE_BYTES):
        self.slice_bytes = slice_bytes
        self.head: bytes | None = None  # bytes before the event array's '[' (b"" for a bare array)
        self.boundary: bytes | None = None  # newline + indent + '{', once the layout is known
        self.found = False  # the event array's opening bracket was seen
        self._buffer = bytearray()
        self._size = 0  # the bytes of the buffer in use (past them: room for the next block)
        self._searched = 0

    @classmethod
    def primed(cls, boundary: bytes, head: bytes = b"", slice_bytes: int = SLICE_BYTES) -> EventSplitter:
        """A splitter for bytes that start at an event start of a known layout (a byte range of the file past
        its first event): ``head`` is what precedes the event array, for `finish` to read the metadata with."""
        splitter = cls(slice_bytes)
        splitter.head, splitter.boundary, splitter.found = head, boundary, True
        return splitter

    def rest(self) -> bytes | None:
        """The whole events left in the buffer as one JSON array (a byte range that ends where an event
        starts), or None when only whitespace is left."""
        self._settle()
        if not self._buffer.strip(_WHITESPACE):
            return None
        return self._slice(0, len(self._buffer))

    @property
    def layout(self) -> str:
        return "lines" if self.boundary else "whole"

    def feed(self, block: bytes | memoryview) -> list[bytes]:
        """Append a block; the whole slices it completes, as JSON arrays (bytes)."""
        return [bytes(view) for view in self.views(block)]

    def views(self, block: bytes | memoryview) -> Iterator[memoryview]:
        """Append a block; each whole slice it completes, as a JSON array in place (see the module docstring)."""
        with self.space(len(block)) as room:
            room[:len(block)] = block
        return self.commit(len(block))

    def read(self, stream: ByteStream) -> Iterator[memoryview]:
        """Each whole slice of ``stream``, its blocks read straight into the buffer (`views` without a copy)."""
        while True:
            with self.space(stream.block_bytes) as room:
                count = stream.read_into(room)
            if not count:
                return
            yield from self.commit(count)

    def space(self, count: int) -> memoryview:
        """Room for ``count`` more bytes at the end of the buffer, to write the next block into (then `commit`
        it). Release the view before committing."""
        if len(self._buffer) < self._size + count:
            self._buffer.extend(bytes(self._size + count - len(self._buffer)))
        return memoryview(self._buffer)[self._size:self._size + count]

    def commit(self, count: int) -> Iterator[memoryview]:
        """Take the ``count`` bytes written into `space` as the stream's next (at once); each whole slice they
        complete."""
        self._size += count
        if not self.found:
            self._settle()
            found = self._find_array()
            self._size = len(self._buffer)
            if not found:
                return iter(())
        return self._cuts()

    def _cuts(self) -> Iterator[memoryview]:
        if self.boundary is None:
            return
        start = 0
        while True:  # cut at the first event start past each slice_bytes
            cut = self._buffer.find(self.boundary, start + self.slice_bytes, self._size)
            if cut < 0:
                break
            view = self._array_view(start, cut)
            yield view
            with contextlib.suppress(BufferError):  # still read in place: see below
                view.release()
            start = cut
        if start:
            self._move_to_front(start)

    def _move_to_front(self, start: int) -> None:
        """Drop the bytes before ``start``: the rest moves to the front of the same buffer."""
        rest = self._size - start
        if _exported(self._buffer):
            # Something still reads a slice in place (decoded values kept alive by a frame that a debugger or a
            # sampling profiler holds): that buffer is left to it, and the splitter goes on in a copy.
            self._buffer = bytearray(memoryview(self._buffer)[start:self._size])
        else:
            with memoryview(self._buffer) as whole:
                whole[:rest] = whole[start:self._size]
        self._size = rest

    def _settle(self) -> None:
        """The buffer cut to the bytes in use, for the steps that read all of it (the head, the end)."""
        if len(self._buffer) == self._size:
            return
        if _exported(self._buffer):
            self._buffer = bytearray(memoryview(self._buffer)[:self._size])
        else:
            del self._buffer[self._size:]

    def finish(self) -> Ending:
        """After the last block: the remaining slices and the tail, or what can be kept of a cut stream."""
        self._settle()
        if not self.found:
            self._find_array(final=True)
        if not self.found:
            return Ending([], None)
        buffer = self._buffer
        last_event = max(buffer.rfind(self.boundary), 0) if self.boundary else 0
        close = self._closing_bracket(last_event)
        if close is not None:
            body = buffer[:close].strip(_WHITESPACE)
            slices = [self._slice(0, close)] if body else []
            return Ending(slices, bytes(buffer[close + 1:]))
        if self.boundary and last_event > 0:
            return Ending([self._slice(0, last_event)], None, self._last_event_candidates(last_event))
        return Ending([], None, self._cut_candidates())

    def remainder(self) -> bytes:
        """The unsplit bytes (everything, when the event array was never found)."""
        return bytes(memoryview(self._buffer)[:self._size])

    def _find_array(self, final: bool = False) -> bool:
        buffer = self._buffer
        if self.head is None:
            start = len(buffer) - len(buffer.lstrip(_WHITESPACE))
            if buffer[start:start + 3] == _BOM:
                start += 3
                start += len(buffer[start:]) - len(buffer[start:].lstrip(_WHITESPACE))
            if start < len(buffer) and buffer[start:start + 1] == b"[":
                self.head, opening = b"", start
            else:
                match = _EVENTS_KEY.search(buffer, max(0, self._searched - 64))
                self._searched = len(buffer)
                if match is None:
                    return False
                self.head, opening = bytes(buffer[:match.end() - 1]), match.end() - 1
            del buffer[:opening + 1]
        stripped = buffer.lstrip(_WHITESPACE)
        if not stripped and not final:
            return False  # the first event is in a later block
        self.found = True
        gap = bytes(buffer[:len(buffer) - len(stripped)])
        if stripped[:1] == b"{" and b"\n" in gap:
            indent = gap[gap.rindex(b"\n") + 1:]
            if not indent.strip(b" \t"):
                self.boundary = b"\n" + indent + b"{"
        return True

    def _array_view(self, start: int, end: int) -> memoryview:
        """The events between start and end as a JSON array: brackets written over the whitespace before them
        and the comma after them, else (another layout) a copy with brackets around it."""
        buffer = self._buffer
        first = start
        while first < end and buffer[first] in _WHITESPACE:
            first += 1
        last = end
        while last > first and buffer[last - 1] in _WHITESPACE:
            last -= 1
        if first > start and last > first and buffer[last - 1] == ord(","):
            buffer[first - 1] = ord("[")
            buffer[last - 1] = ord("]")
            return memoryview(buffer)[first - 1:last]
        return memoryview(self._slice(start, end))

    def _slice(self, start: int, end: int) -> bytes:
        """``[`` + the events between start and end (trailing separator dropped) + ``]``."""
        buffer = self._buffer
        while end > start and buffer[end - 1] in _WHITESPACE:
            end -= 1
        if end > start and buffer[end - 1] == ord(","):
            end -= 1
        with memoryview(buffer) as view:
            return b"".join((b"[", view[start:end], b"]"))

    def _closing_bracket(self, search_from: int) -> int | None:
        """The event array's ``]``: the last one after which the file closes as valid JSON."""
        buffer = self._buffer
        position = len(buffer)
        for _ in range(_MAX_CLOSE_TRIES):
            position = buffer.rfind(b"]", search_from, position)
            if position < 0:
                return None
            tail = bytes(buffer[position + 1:])
            if self.head == b"":
                if not tail.strip(_WHITESPACE):
                    return position
                continue
            try:
                METADATA_DECODER.decode(self.head + b"[]" + tail)
            except (ValueError, RecursionError):  # msgspec's errors are ValueErrors
                continue
            return position
        return None

    def _last_event_candidates(self, last_event: int) -> Iterator[bytes]:
        """The last event when the stream was cut after it: up to a ``]`` that closed the array (the cut fell in
        the metadata after it), else up to the end (the cut fell after the event itself)."""
        buffer = self._buffer
        position = len(buffer)
        for _ in range(_MAX_CLOSE_TRIES):
            position = buffer.rfind(b"]", last_event, position)
            if position < 0:
                break
            yield self._slice(last_event, position)
        yield self._slice(last_event, len(buffer))

    def _cut_candidates(self) -> Iterator[bytes]:
        """A one-line array cut mid-event: the prefixes ending at one of the last object closes."""
        buffer = self._buffer
        position = len(buffer)
        for _ in range(_MAX_CLOSE_TRIES):
            position = buffer.rfind(b"}", 0, position)
            if position < 0:
                return
            yield self._slice(0, position + 1)


def _exported(buffer: bytearray) -> bool:
    """Whether something still reads the buffer in place: a bytearray cannot change size while it is exported."""
    try:
        buffer.append(0)
    except BufferError:
        return True
    del buffer[-1]
    return False
