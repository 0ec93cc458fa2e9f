"""The shadow device: a CPU run that knows what would live on the GPU.

``with shadow_device():`` makes this CPU-only process answer as a one-GPU machine. Tensors the code places
on the accelerator (``device="cuda"``, ``.cuda()``, ``.to(device)``, a module moved with ``.to()``, results of
ops on device tensors) are :class:`ShadowTensor` s: ``device`` cuda:0, data in host memory. Tensors it keeps
on the host stay plain. The runtime guard, under a shadow device, reports a sync only where device data
reaches the host, and records host-only ops as host-resident without counting them. What the emulation
cannot follow (a custom op, a raw data pointer, CUDA graphs) is a :class:`ShadowNote`.
"""

from __future__ import annotations

from synchunt.shadow.device import ShadowDevice, check_machine, shadow_device
from synchunt.shadow.notes import NoteKind, ShadowNote
from synchunt.shadow.state import DEVICE_NAME, DeviceSpec, is_active
from synchunt.shadow.tensor import ShadowTensor, is_shadow

__all__ = ["DEVICE_NAME", "DeviceSpec", "NoteKind", "ShadowDevice", "ShadowNote", "ShadowTensor", "check_machine",
           "is_active", "is_shadow", "shadow_device"]
