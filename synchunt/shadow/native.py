"""What the C++ side of a CPU-only torch needs before a tensor may say ``device='cuda'``.

Two things, both process-wide:

- **A CUDA device guard.** Indexing, ``torch.tensor(..., device=...)`` and every ``OptionalDeviceGuard`` look
  up the guard registered for the tensor's device type; a CPU-only build has none for CUDA and raises
  "PyTorch is not linked with support for cuda devices". torch's own no-op guard for that case
  (``torch._C._ensureCUDADeviceGuardSet``, what ``FakeTensorMode`` calls) installs itself only in a CUDA build
  without devices, so we register the Python-backed guard torch offers for accelerator prototypes
  (``torch._C._acc.DeviceGuard``, made to say CUDA, device index 0, no-op streams) under CUDA. torch only
  registers it under PrivateUse1, so the slot is borrowed for the call and given back. The guard stays
  registered for the life of the process: a no-op guard is harmless, and another thread may hold one.
- **A CUDA kernel for every op** (a backend fallback): a factory asked for ``device='cuda'`` (``torch.empty``,
  the ``at::empty`` inside ``_to_copy`` of ``t.to('cuda')``) reaches the CUDA key, which a CPU-only build has no
  kernels for; the fallback runs it on the host and hands back a shadow tensor. It is registered while a
  shadow device is active.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable
from typing import Any

import torch

from synchunt.errors import UsageError

_REGISTRY = "_ZN3c104impl26device_guard_impl_registryE"
_REGISTER = "_ZN3c104impl19registerDeviceGuardENS_10DeviceTypeEPKNS0_24DeviceGuardImplInterfaceE"
_CUDA_SLOT = 1  # c10::DeviceType::CUDA
_PRIVATE_USE1_SLOT = 20  # c10::DeviceType::PrivateUse1


class _CudaDeviceGuard(torch._C._acc.DeviceGuard):  # type: ignore[misc,name-defined]
    """torch's Python-backed device guard (device 0, no-op streams and events), for the CUDA device type."""

    def type_(self) -> Any:
        return torch._C._autograd.DeviceType.CUDA


_GUARD: _CudaDeviceGuard | None = None


def has_cuda_guard() -> bool:
    """Whether a CUDA device guard is registered (a CUDA build, or one registered here)."""
    registry, _ = _c10()
    return bool(registry[_CUDA_SLOT])


def ensure_cuda_device_guard() -> None:
    """Register a no-op CUDA device guard if this build has none (once per process)."""
    global _GUARD
    registry, register = _c10()
    if registry[_CUDA_SLOT]:
        return
    guard = _CudaDeviceGuard()
    borrowed = registry[_PRIVATE_USE1_SLOT]
    register(_PRIVATE_USE1_SLOT, None)
    try:
        if not torch._C._acc.register_python_privateuseone_device_guard(guard):
            raise UsageError("shadow device: torch would not register a device guard")
        register(_CUDA_SLOT, registry[_PRIVATE_USE1_SLOT])
    finally:
        register(_PRIVATE_USE1_SLOT, borrowed)
    _GUARD = guard  # registered by pointer: it must live as long as the process


_LIBRARY: Any = None


@functools.cache
def _c10() -> tuple[Any, Callable[[int, int | None], None]]:
    folder = os.path.join(os.path.dirname(torch.__file__), "lib")
    names = [name for name in ("libc10.so", "libc10.dylib", "c10.dll") if os.path.exists(os.path.join(folder, name))]
    try:
        library = ctypes.CDLL(os.path.join(folder, names[0] if names else "libc10.so"))
        registry = (ctypes.c_void_p * (_PRIVATE_USE1_SLOT + 1)).in_dll(library, _REGISTRY)
        register = getattr(library, _REGISTER)
    except (OSError, ValueError, AttributeError) as error:
        raise UsageError(f"shadow device: this torch build does not expose its device guard registry ({error}); "
                         f"the shadow device is tested with torch 2.13 on Linux") from None
    register.argtypes = [ctypes.c_int8, ctypes.c_void_p]
    register.restype = None
    return registry, register


def register_cuda_fallback(kernel: Callable[..., Any]) -> None:
    """Send every op that reaches the CUDA key to ``kernel(op, *args, **kwargs)``."""
    global _LIBRARY
    if _LIBRARY is None:
        library = torch.library.Library("_", "IMPL")
        library.fallback(kernel, "CUDA")
        _LIBRARY = library


def remove_cuda_fallback() -> None:
    global _LIBRARY
    if _LIBRARY is not None:
        _LIBRARY._destroy()
        _LIBRARY = None
