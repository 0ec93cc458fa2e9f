"""What the C++ side of torch needs before a tensor may say ``device='cuda'`` on a machine without a GPU.

Two things, both process-wide:

- **A CUDA device guard.** Indexing, ``torch.tensor(..., device=...)`` and every ``OptionalDeviceGuard`` look
  up the guard registered for the tensor's device type. A CPU-only build has none for CUDA ("PyTorch is not
  linked with support for cuda devices"); a CUDA build has the real one, which asks the driver ("Found no NVIDIA
  driver") on a machine without a GPU. We register the Python-backed guard torch offers for accelerator
  prototypes (``torch._C._acc.DeviceGuard``, made to say CUDA, device index 0, no-op streams) under CUDA. torch
  only registers it under PrivateUse1, so the slot is borrowed for the call and given back. The guard stays
  registered for the life of the process: a no-op guard is harmless, another thread may hold one, and the real
  guard of a CUDA build it replaces could only fail on this machine (the shadow device refuses a machine with a
  GPU).
- **CUDA kernels that run on the host.** A factory asked for ``device='cuda'`` (``torch.empty``, the
  ``at::empty_strided`` inside ``_to_copy`` of ``t.to('cuda')``) reaches the CUDA key with no shadow tensor among
  its arguments. A CPU-only build has no CUDA kernels: one backend fallback catches every op there. A CUDA build
  has its real kernels, which would ask the driver: the ops that can reach the CUDA key without a tensor
  argument (those with a ``device`` argument and a CUDA kernel: ``empty.memory_format``, ``empty_strided`` …)
  get a kernel of ours that overrides it. Every other op reaches the CUDA key only through a tensor on the
  device, which is a shadow tensor and goes to its ``__torch_dispatch__`` first (the Python key comes before
  CUDA). Both are registered while a shadow device is active.
"""

from __future__ import annotations

import ctypes
import functools
import os
import warnings
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
    """Register the no-op CUDA device guard in place of none (a CPU-only build) or of the real one (a CUDA build
    on a machine without a GPU), once per process."""
    global _GUARD
    if _GUARD is not None:
        return
    registry, register = _c10()
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
_OVERRIDES: Any = None


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
    """Send every op that reaches the CUDA key without a shadow tensor to ``kernel(op, *args, **kwargs)``: the
    ops without a CUDA kernel through a backend fallback, those with one (a CUDA build) through an override."""
    global _LIBRARY, _OVERRIDES
    if _LIBRARY is None:
        library = torch.library.Library("_", "IMPL")
        library.fallback(kernel, "CUDA")
        _LIBRARY = library
    if _OVERRIDES is None and torch.backends.cuda.is_built():
        _OVERRIDES = _override_factories(kernel)


def remove_cuda_fallback() -> None:
    global _LIBRARY, _OVERRIDES
    for library in (_LIBRARY, _OVERRIDES):
        if library is not None:
            library._destroy()
    _LIBRARY = _OVERRIDES = None


@functools.cache
def factories_with_cuda_kernels() -> tuple[torch._ops.OpOverload, ...]:
    """The aten ops that reach the CUDA key from a ``device`` argument alone and have a CUDA kernel there."""
    found = []
    for qualified in torch._C._dispatch_get_all_op_names():
        namespace, _, name = qualified.partition("::")
        if namespace != "aten" or not torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CUDA"):
            continue
        packet, _, overload = name.partition(".")
        func = getattr(getattr(torch.ops.aten, packet, None), overload or "default", None)
        if func is not None and any(argument.name == "device" for argument in func._schema.arguments):
            found.append(func)
    return tuple(found)


def _override_factories(kernel: Callable[..., Any]) -> Any:
    library = torch.library.Library("aten", "IMPL")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "overriding a previously registered kernel"
            for func in factories_with_cuda_kernels():
                overload = func._overloadname
                name = func._schema.name.removeprefix("aten::") + ("" if overload == "default" else f".{overload}")
                library.impl(name, functools.partial(kernel, func), "CUDA")
    except BaseException:
        library._destroy()
        raise
    return library
