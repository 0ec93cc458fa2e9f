"""Reading a trace file's bytes: plain or gzip, streamed in blocks, with a cap on the decompressed size."""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path

import msgspec

from synchunt.errors import TraceError

DEFAULT_MAX_BYTES = 8 << 30  # 8 GiB of JSON: beyond the largest per-rank traces seen, below a gzip bomb
BLOCK_BYTES = 8 << 20
_GZIP_MAGIC = b"\x1f\x8b"


class PartialRead(msgspec.Struct, frozen=True):
    """A trace cut mid-write: what could be kept (and, in an analysis, the events before the cut were analysed)."""

    bytes_read: int  # uncompressed bytes read before the cut
    events_read: int  # events decoded before the cut (every kind, not only complete events)
    reason: str


def check_file(path: Path) -> os.stat_result:
    """The file's stat, or a TraceError when it is missing or not a regular file (a FIFO, a device, …)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise TraceError(f"no such trace: {path}") from None
    except OSError as error:
        raise TraceError(f"cannot read trace {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise TraceError(f"{path}: not a regular file")
    return info


def is_gzip_magic(head: bytes) -> bool:
    """Whether a file starting with ``head`` is gzip."""
    return head[:2] == _GZIP_MAGIC


def head_bytes(path: Path, count: int, *, decompress: bool = True) -> bytes:
    """The first ``count`` bytes of the trace (decompressed unless told not to), without reading the rest."""
    check_file(path)
    if not decompress:
        try:
            with path.open("rb") as handle:
                return handle.read(count)
        except OSError as error:
            raise TraceError(f"cannot read trace {path}: {error.strerror or error}") from None
    stream = ByteStream(path, block_bytes=max(count, 1 << 16))
    head = bytearray()
    for block in stream:
        head += block
        if len(head) >= count:
            break
    stream.close()
    return bytes(head[:count])


MAX_BLANK_RUN = 1 << 20  # whitespace kept in one run; no trace torch writes has a longer one
_JSON_WHITESPACE = b" \t\n\r"


def _is_blank(block: bytes | memoryview) -> bool:
    """Whether ``block`` is JSON whitespace only (its ends first: false for almost every block, at no cost)."""
    if not len(block) or block[0] not in _JSON_WHITESPACE or block[-1] not in _JSON_WHITESPACE:
        return False
    data = bytes(block)
    return data.isspace() and not data.translate(None, _JSON_WHITESPACE)


def _trailing_blanks(block: bytes | memoryview) -> int:
    """How many bytes of JSON whitespace end ``block`` (counted up to ``MAX_BLANK_RUN``: all the run needs).

    Looked for in a short tail first, then in longer ones: a block of events ends in a line's indent, and copying
    the last megabyte to count it cost more than reading the block."""
    if not len(block) or block[-1] not in _JSON_WHITESPACE:
        return 0
    limit = min(len(block), MAX_BLANK_RUN)
    width = 256
    while True:
        width = min(width, limit)
        tail = bytes(block[-width:])
        kept = len(tail.rstrip(_JSON_WHITESPACE))
        if kept or width == limit:
            return width - kept
        width *= 16


class ByteStream:
    """The trace's uncompressed bytes in blocks of at most ``block_bytes``.

    A gzip stream that ends before its end-of-stream marker (a trace cut mid-write) stops early and sets
    ``truncated``; corrupt compressed data and more than ``max_bytes`` of output are TraceErrors. Whole blocks
    of whitespace past a run of ``MAX_BLANK_RUN`` bytes are dropped, so that padding costs no memory (a string
    holding a megabyte of spaces loses some of them: no name is like that).
    """

    def __init__(self, path: Path, *, block_bytes: int = BLOCK_BYTES, max_bytes: int = DEFAULT_MAX_BYTES,
                 reuse: bool = False, start: int = 0, stop: int | None = None):
        self.path = path
        self.block_bytes = block_bytes
        self.max_bytes = max_bytes
        self.reuse = reuse  # plain files: each block is a view of one buffer, valid until the next block
        # A byte range [start, stop) of a plain file (one process's share of it); the counts below are
        # positions in the file, so caps, progress and a partial read's figures read as for the whole file.
        self.stop = stop
        self.bytes_read = start
        self.compressed_read = start
        self.truncated = False
        self._ranged = start > 0 or stop is not None  # a share of a plain file: never gzip
        self._blank_run = 0  # bytes of JSON whitespace at the end of what was passed on
        self._inflated: Iterator[bytes] | None = None  # read_into on a gzip file: its inflated blocks
        self._plain_file: bool | None = None  # read_into: whether the file is read as it is (None: not yet known)
        check_file(path)
        try:
            self._handle = path.open("rb")
            self._handle.seek(start)
        except OSError as error:
            raise TraceError(f"cannot read trace {path}: {error.strerror or error}") from None

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> ByteStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[bytes | memoryview]:
        try:
            first = self._read(self.block_bytes)
            blocks = self._gunzip(first) if is_gzip_magic(first) and not self._ranged else self._plain(first)
            yield from filter(self._take, blocks)
        finally:
            self.close()

    def read_into(self, target: memoryview) -> int:
        """The next block, written at the start of ``target`` (room for ``block_bytes``): its length, 0 once the
        stream has ended. A plain file is read straight into ``target`` (a caller that keeps its own buffer copies
        nothing); the caps, counts and padding rule are those of iterating."""
        while True:
            count = self._next_into(target)
            if not count:
                self.close()
                return 0
            if self._take(target[:count]):
                return count

    def _next_into(self, target: memoryview) -> int:
        if self._plain_file is None:  # the first block says whether the file is gzip
            count = self._read_into(target)
            self._plain_file = not (is_gzip_magic(target[:count]) and not self._ranged)
            if self._plain_file:
                return count
            self._inflated = self._gunzip(bytes(target[:count]))
        if self._plain_file:
            return self._read_into(target)
        block = next(self._inflated, b"")  # type: ignore[arg-type]  (set with the flag above)
        target[:len(block)] = block
        return len(block)

    def _take(self, block: bytes | memoryview) -> bool:
        """Count a block read; False for padding that is dropped."""
        self.bytes_read += len(block)
        if self.bytes_read > self.max_bytes:
            raise TraceError(f"{self.path}: more than {_size(self.max_bytes)} of trace data once "
                             "decompressed (raise the cap to read it: --max-trace-bytes, or "
                             "LoadOptions.max_bytes)")
        blank = _is_blank(block)
        if blank and self._blank_run >= MAX_BLANK_RUN:
            return False  # padding (a whitespace bomb): JSON needs none of it, so none of it is kept
        self._blank_run = self._blank_run + len(block) if blank else _trailing_blanks(block)
        return True

    def _room(self, count: int) -> int:
        """At most ``count`` bytes, and none past ``stop``."""
        return count if self.stop is None else max(0, min(count, self.stop - self.compressed_read))

    def _read_into(self, target: memoryview) -> int:
        try:
            count = self._handle.readinto(target[:self._room(len(target))])
        except OSError as error:
            raise TraceError(f"cannot read trace {self.path}: {error.strerror or error}") from None
        self.compressed_read += count
        return count

    def _read(self, count: int) -> bytes:
        try:
            data = self._handle.read(self._room(count))
        except OSError as error:
            raise TraceError(f"cannot read trace {self.path}: {error.strerror or error}") from None
        self.compressed_read += len(data)
        return data

    def _plain(self, first: bytes) -> Iterator[bytes | memoryview]:
        yield first
        if not first:
            return
        if not self.reuse:
            block = self._read(self.block_bytes)
            while block:
                yield block
                block = self._read(self.block_bytes)
            return
        buffer = bytearray(self.block_bytes)  # read into one buffer: no fresh pages per block
        with memoryview(buffer) as view:
            while count := self._read_into(view):
                yield view[:count]

    def _gunzip(self, first: bytes) -> Iterator[bytes]:
        inflater = zlib.decompressobj(wbits=31)
        pending = first
        while True:
            if not pending:
                pending = self._read(self.block_bytes)
                if not pending:
                    self.truncated = not inflater.eof or bool(inflater.unconsumed_tail)
                    return
            try:
                # max_length bounds each output block, so a gzip bomb is cut by max_bytes, not by memory.
                out = inflater.decompress(pending, self.block_bytes)
            except zlib.error as error:
                raise TraceError(f"{self.path}: not a valid gzip file ({error})") from None
            pending = inflater.unconsumed_tail
            if out:
                yield out
            if inflater.eof:
                rest = inflater.unused_data
                if not rest.strip(b"\x00"):
                    rest = self._read(self.block_bytes)
                    if not rest.strip(b"\x00"):
                        return
                if rest[:2] != _GZIP_MAGIC:
                    return  # trailing garbage after the last member is ignored, as gzip(1) does
                inflater = zlib.decompressobj(wbits=31)  # the next member of a multi-member file
                pending = rest


def read_bytes(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The whole uncompressed trace, as far as it goes (decoding streams instead; a head check wants
    `head_bytes`)."""
    return b"".join(ByteStream(Path(path), max_bytes=max_bytes))



def _size(count: int) -> str:
    """``1,000,000 bytes (976.6 KiB)``: the exact cap, and its size in a unit people read."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count:,} bytes ({count / scale:.1f} {unit})"
    return f"{count:,} bytes"
