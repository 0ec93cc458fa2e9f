"""What the shadow device could not follow, said where it happened rather than guessed.

A note names its kind, the op or call, the user's line and what the emulation did instead. Identical notes
(kind, op, line) are kept once with a count. Every active :class:`~synchunt.shadow.device.ShadowDevice`
receives the notes made while it is active, from any thread (the shadow device is process-wide).
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, replace
from enum import Enum
from types import CodeType

from synchunt.sites import LIBRARY_PACKAGES, FrameFilter, is_stdlib_file


class NoteKind(str, Enum):
    """Why the emulation may differ from a GPU run at this line."""

    CUSTOM_OP = "custom-op"  # an op outside aten: it ran on the host data; its device kernel is not followed
    NO_HOST_KERNEL = "no-host-kernel"  # a CUDA-only op: nothing to run it with (the run stops there)
    MIXED_DEVICES = "mixed-devices"  # host and device tensors in one op that a GPU would refuse
    DATA_POINTER = "data-pointer"  # device data left through a raw pointer (data_ptr, ctypes, extensions)
    NOT_EMULATED = "not-emulated"  # a CUDA feature the shadow device does not model (graphs, IPC …)


@dataclass(frozen=True)
class ShadowNote:
    """One place where the shadow device could not tell what a GPU run would do."""

    kind: NoteKind
    op: str  # e.g. "mylib::fused_gather", "Tensor.data_ptr", "torch.cuda.CUDAGraph"
    file: str
    line: int
    function: str
    detail: str
    count: int = 1

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def describe(self) -> str:
        times = f" ×{self.count}" if self.count > 1 else ""
        return f"{self.kind.value} {self.op} at {self.location} in {self.function}{times}: {self.detail}"

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind.value, "op": self.op, "file": self.file, "line": self.line,
                "function": self.function, "detail": self.detail, "count": self.count}


class NoteBook:
    """The notes one shadow device collected, identical ones counted."""

    def __init__(self) -> None:
        self._notes: dict[tuple[NoteKind, str, str, int], ShadowNote] = {}
        self._lock = threading.Lock()

    def add(self, note: ShadowNote) -> None:
        key = (note.kind, note.op, note.file, note.line)
        with self._lock:
            known = self._notes.get(key)
            self._notes[key] = note if known is None else replace(known, count=known.count + 1)

    @property
    def notes(self) -> tuple[ShadowNote, ...]:
        with self._lock:
            return tuple(self._notes.values())


_BOOKS: list[NoteBook] = []  # of the active shadow devices
_BOOKS_LOCK = threading.Lock()


def open_book(book: NoteBook) -> None:
    with _BOOKS_LOCK:
        _BOOKS.append(book)


def close_book(book: NoteBook) -> None:
    with _BOOKS_LOCK:
        if book in _BOOKS:
            _BOOKS.remove(book)


def note(kind: NoteKind, op: str, detail: str) -> None:
    """Record a note at the calling user line for every active shadow device."""
    books = tuple(_BOOKS)
    if not books:
        return
    file, line, function = user_frame()
    made = ShadowNote(kind=kind, op=op, file=file, line=line, function=function, detail=detail)
    for book in books:
        book.add(made)


_FILTER = FrameFilter(skip_packages=LIBRARY_PACKAGES)
_LIBRARY_CODE: dict[CodeType, bool] = {}


def _is_library(code: CodeType, module: str) -> bool:
    known = _LIBRARY_CODE.get(code)
    if known is None:
        file = code.co_filename
        known = _FILTER.is_library_module(module) or file.startswith("<frozen") or is_stdlib_file(file)
        _LIBRARY_CODE[code] = known
    return known


def user_frame() -> tuple[str, int, str]:
    """(file, line, function) of the innermost frame outside torch, synchunt and the standard library."""
    frame = sys._getframe(1)
    innermost = None
    while frame is not None:
        code = frame.f_code
        if innermost is None:
            innermost = (code.co_filename, frame.f_lineno, code.co_name)
        if not _is_library(code, frame.f_globals.get("__name__", "")):
            return code.co_filename, frame.f_lineno, code.co_name
        frame = frame.f_back
    return innermost or ("<unknown>", 0, "")
