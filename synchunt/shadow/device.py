"""``shadow_device()``: run on the CPU as if this machine had one GPU.

What the code places on the accelerator becomes a :class:`~synchunt.shadow.tensor.ShadowTensor` (data on the
host, ``device`` cuda:0) and stays one through every op; what it keeps on the host stays a plain tensor. The
runtime guard then reads each op's devices as a GPU run would have them: a sync is reported where device
data reaches the host, a host-only op is recorded as host-resident and not counted.
"""

from __future__ import annotations

import warnings
from contextlib import ContextDecorator
from types import TracebackType

import torch

from synchunt.errors import UsageError
from synchunt.shadow import native, patches, state
from synchunt.shadow.dispatch import fallback
from synchunt.shadow.notes import NoteBook, ShadowNote, close_book, open_book
from synchunt.shadow.state import DeviceSpec


class _Installed:
    """What the outermost activation put in place (undone by the last exit)."""

    def __init__(self) -> None:
        native.ensure_cuda_device_guard()
        patches.install_dormant()
        self.previous_lift = torch._C._only_lift_cpu_tensors()
        torch._C._set_only_lift_cpu_tensors(True)  # torch.tensor(..., device=) builds on the host, then moves
        native.register_cuda_fallback(fallback)
        self.swapped = patches.Swapped()

    def undo(self) -> None:
        self.swapped.undo()
        native.remove_cuda_fallback()
        torch._C._set_only_lift_cpu_tensors(self.previous_lift)


_INSTALLED: _Installed | None = None


def check_machine() -> None:
    """The shadow device stands in for a GPU this machine lacks: refused where torch sees one (a CPU-only build,
    or a CUDA build on a machine without a GPU, as CI machines are, are both fine)."""
    if torch.backends.cuda.is_built() and _real_device_count() > 0:
        raise UsageError("the shadow device stands in for a GPU this machine lacks; a GPU is here: profile with "
                         "--device cuda")


def _real_device_count() -> int:
    """The GPUs torch sees, not the shadow device's answer (``torch.cuda.device_count`` answers 1 while active)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a CUDA build without a driver warns once
        return int(torch._C._cuda_getDeviceCount()) if hasattr(torch._C, "_cuda_getDeviceCount") else 0


class ShadowDevice(ContextDecorator):
    """A one-GPU machine emulated on the CPU, process-wide, while the region runs (nesting allowed).

    ``notes`` lists what the emulation could not follow while this region was active.
    """

    def __init__(self, spec: DeviceSpec | None = None) -> None:
        self.spec = spec or DeviceSpec()
        self._book = NoteBook()
        self._entered = 0
        self._tensors_before = 0
        self._tensors_made: int | None = None

    @property
    def device_tensors(self) -> int:
        """Device tensors the code made while this region was active: 0 means it never used the GPU it was
        offered (it ran as a CPU-only program, so its syncs say nothing of a GPU run)."""
        if self._tensors_made is not None:
            return self._tensors_made
        return state.STATE.device_tensors - self._tensors_before

    @property
    def notes(self) -> tuple[ShadowNote, ...]:
        return self._book.notes

    def __enter__(self) -> ShadowDevice:
        global _INSTALLED
        check_machine()
        with state.lock():
            if state.STATE.depth == 0:
                state.STATE.spec = self.spec
                _INSTALLED = _Installed()
            elif self.spec != state.STATE.spec and self.spec != DeviceSpec():
                raise UsageError("a shadow device with another machine description is already active")
            state.STATE.depth += 1
            if self._entered == 0:
                self._tensors_before, self._tensors_made = state.STATE.device_tensors, None
            self._entered += 1
        open_book(self._book)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        global _INSTALLED
        with state.lock():
            if self._entered == 0:
                return
            self._entered -= 1
            if self._entered == 0:
                close_book(self._book)
                self._tensors_made = state.STATE.device_tensors - self._tensors_before
            state.STATE.depth -= 1
            if state.STATE.depth == 0 and _INSTALLED is not None:
                _INSTALLED.undo()
                _INSTALLED = None


def shadow_device(spec: DeviceSpec | None = None) -> ShadowDevice:
    """Run the region as on a one-GPU machine: ``with synchunt.shadow_device(): step()``."""
    return ShadowDevice(spec)
