"""The shadow device's process-wide state: whether it is active, the machine it stands for, and who hears of
the calls it makes for the user (the runtime guard).

The shadow device is process-wide on purpose: a CPU-only machine pretends to have a GPU for every thread
(a data loader's pin-memory thread, a scheduler thread, the autograd engine's device thread).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

DEVICE_NAME = "shadow-cuda"  # the --device value that asks for it


@dataclass(frozen=True)
class DeviceSpec:
    """The one-GPU machine the shadow device answers for (``torch.cuda.get_device_properties`` and friends).

    ``capability`` (8, 0) is an A100's: new enough that libraries take their bf16 and fused paths, and what
    most serving stacks are tested on.
    """

    name: str = "synchunt shadow device (CUDA emulated on the host)"
    count: int = 1
    capability: tuple[int, int] = (8, 0)
    total_memory: int = 80 * 1024**3
    multi_processor_count: int = 108


@dataclass
class _State:
    depth: int = 0  # nested activations
    spec: DeviceSpec = DeviceSpec()
    device_tensors: int = 0  # device-resident shadow tensors made so far (a run that made none used no GPU)


STATE = _State()
_LOCK = threading.RLock()
_CURRENT = threading.local()  # the current device index of each thread, as CUDA keeps it


def is_active() -> bool:
    """True while a shadow device is active (in any thread)."""
    return STATE.depth > 0


def lock() -> threading.RLock:
    return _LOCK


def current_index() -> int:
    return getattr(_CURRENT, "index", 0)


def set_current_index(index: int) -> None:
    _CURRENT.index = check_index(index)


def check_index(index: int | None) -> int:
    """``index`` (None: the current one) if this machine has that device; CUDA's error otherwise."""
    if index is None:
        return current_index()
    if not 0 <= index < STATE.spec.count:
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {index} on a shadow machine with "
                           f"{STATE.spec.count} device{'s' if STATE.spec.count != 1 else ''})")
    return index


def device(index: int | None = None) -> torch.device:
    return torch.device("cuda", check_index(index))


Reporter = Callable[[str, "torch.Tensor | None", Callable[[], Any]], Any]
_REPORTER: list[Reporter] = []
_KNOWN: list[frozenset[str]] = [frozenset()]


def set_reporter(reporter: Reporter | None, known: frozenset[str] = frozenset()) -> None:
    """Who reports the calls the emulation makes for the user (the runtime guard, while installed), and the
    targets it knows how to report (a library op named there is followed, not noted as a custom op)."""
    with _LOCK:
        _REPORTER[:] = [reporter] if reporter is not None else []
        _KNOWN[0] = known if reporter is not None else frozenset()


def knows(target: str) -> bool:
    """Whether what a GPU run does at ``target`` is known: the reporter's targets, and the library ops whose CUDA
    kernel the catalogue describes (``"torchvision::nms"``), also while no guard is installed (the profiled pass),
    so that the recorded pass does not note as unfollowed what the guard pass reports."""
    return target in _KNOWN[0] or target in _catalogued_library_ops()


@functools.cache
def _catalogued_library_ops() -> frozenset[str]:
    from synchunt.rules import RULES

    return frozenset(op.op for rule in RULES for op in rule.trace_ops
                     if "::" in op.op and op.op.partition("::")[0] not in ("aten", "prims"))


def reported(target: str, tensor: torch.Tensor | None, run: Callable[[], Any]) -> Any:
    """Run ``run`` as the call ``target`` of the catalogue's guard patches (``"torch.Tensor.tolist"``,
    ``"torch.cuda.synchronize"``) on ``tensor``: reported where a GPU run would report it.

    The emulation needs this where torch refuses a tensor subclass in C (``tolist``, ``numpy``) and where it
    replaces a CUDA entry point (``synchronize``): the guard's own patch never sees those calls.
    """
    reporter = _REPORTER[0] if _REPORTER else None
    return reporter(target, tensor, run) if reporter is not None else run()
