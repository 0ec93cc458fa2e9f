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
    """How many bytes of JSON whitespace end ``block`` (counted up to ``MAX_BLANK_RUN``: all the run needs)."""
    if not len(block) or block[-1] not in _JSON_WHITESPACE:
        return 0
    tail = bytes(block[-MAX_BLANK_RUN:])
    return len(tail) - len(tail.rstrip(_JSON_WHITESPACE))


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
        check_file(path)
        try:
            self._handle = path.open("rb")
            self._handle.seek(start)
        except OSError as error:
            raise TraceError(f"cannot read trace {path}: {error.strerror or error}") from None

    def close(self) -> None:
        self._handle.close()

    def __iter__(self) -> Iterator[bytes | memoryview]:
        try:
            ranged = self.compressed_read > 0 or self.stop is not None
            first = self._read(self.block_bytes)
            blocks = self._gunzip(first) if is_gzip_magic(first) and not ranged else self._plain(first)
            blank_run = 0  # bytes of JSON whitespace at the end of what was passed on
            for block in blocks:
                self.bytes_read += len(block)
                if self.bytes_read > self.max_bytes:
                    raise TraceError(f"{self.path}: more than {_size(self.max_bytes)} of trace data once "
                                     "decompressed (raise the cap to read it: --max-trace-bytes, or "
                                     "LoadOptions.max_bytes)")
                blank = _is_blank(block)
                if blank and blank_run >= MAX_BLANK_RUN:
                    continue  # padding (a whitespace bomb): JSON needs none of it, so none of it is kept
                blank_run = blank_run + len(block) if blank else _trailing_blanks(block)
                yield block
        finally:
            self.close()

    def _room(self, count: int) -> int:
        """At most ``count`` bytes, and none past ``stop``."""
        return count if self.stop is None else max(0, min(count, self.stop - self.compressed_read))

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
            while True:
                try:
                    count = self._handle.readinto(view[:self._room(len(view))])
                except OSError as error:
                    raise TraceError(f"cannot read trace {self.path}: {error.strerror or error}") from None
                if not count:
                    return
                self.compressed_read += count
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
