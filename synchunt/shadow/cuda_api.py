"""``torch.cuda`` as a one-GPU machine answers it, for code running under the shadow device.

Queries (``is_available``, ``device_count``, ``get_device_properties`` …) answer for :class:`DeviceSpec`.
Work is synchronous on the host, so streams and events only keep their bookkeeping: ``query()`` is always
done, ``wait_event``/``wait_stream``/``Event.wait`` are device-side waits that cost the host nothing, and the
host waits (``torch.cuda.synchronize()``, ``Stream.synchronize()``, ``Event.synchronize()``) are reported to
the runtime guard as the explicit syncs they are on a GPU.
"""

from __future__ import annotations

import itertools
import threading
import time
from types import SimpleNamespace
from typing import Any

import torch

from synchunt.shadow import state
from synchunt.shadow.notes import NoteKind, note

_CUDA_TYPE = 1  # c10::DeviceType::CUDA
_STREAM_IDS = itertools.count(1)
_STREAMS = threading.local()  # the current stream of each device, per thread (as CUDA keeps it)


def _index(device: Any = None) -> int:
    if device is None:
        return state.current_index()
    if isinstance(device, int):
        return state.check_index(device)
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        return state.check_index(device.index)
    index = getattr(device, "device_index", None)  # a stream
    return state.check_index(index)


class ShadowStream(torch.Stream):
    """``torch.cuda.Stream``: a ``torch.Stream`` of device type CUDA (so ``record_stream`` accepts it)."""

    def __new__(cls, device: Any = None, priority: int = 0, *, stream_id: int | None = None,
                **kwargs: Any) -> ShadowStream:
        stream = super().__new__(cls, stream_id=next(_STREAM_IDS) if stream_id is None else stream_id,
                                 device_index=_index(device), device_type=_CUDA_TYPE)
        stream.shadow_priority = priority
        return stream

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        pass

    @property
    def priority(self) -> int:
        return self.shadow_priority

    @property
    def cuda_stream(self) -> int:
        return self.stream_id

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        state.reported("torch.cuda.Stream.synchronize", None, _nothing)

    def wait_event(self, event: ShadowEvent) -> None:
        event.wait(self)

    def wait_stream(self, stream: torch.Stream) -> None:
        """A device-side wait: the host goes on."""

    def record_event(self, event: ShadowEvent | None = None) -> ShadowEvent:
        event = event if event is not None else ShadowEvent()
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, torch.Stream) and (other.stream_id, other.device_index) == (
            self.stream_id, self.device_index)

    def __hash__(self) -> int:
        return hash((self.stream_id, self.device_index))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.stream_id:#x} (shadow)>"


class ShadowEvent:
    """``torch.cuda.Event``: recording stamps the host clock (work already ran), so ``elapsed_time`` is host time."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 external: bool = False) -> None:
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self._stamp: float | None = None

    @property
    def cuda_event(self) -> int:
        return id(self)

    def record(self, stream: torch.Stream | None = None) -> None:
        self._stamp = time.perf_counter()

    def wait(self, stream: torch.Stream | None = None) -> None:
        """A device-side wait: the host goes on."""

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        state.reported("torch.cuda.Event.synchronize", None, _nothing)

    def elapsed_time(self, end_event: ShadowEvent) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._stamp is None or end_event._stamp is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._stamp - self._stamp) * 1e3

    def ipc_handle(self) -> bytes:
        note(NoteKind.NOT_EMULATED, "torch.cuda.Event.ipc_handle", "events shared between processes")
        raise RuntimeError("shadow device: CUDA IPC event handles are not emulated")

    def __repr__(self) -> str:
        return f"<torch.cuda.Event {id(self):#x} (shadow)>"


class _GeneratorType(type(torch._C.Generator)):  # type: ignore[misc]
    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, torch._C.Generator)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return issubclass(subclass, torch._C.Generator)


class ShadowGenerator(torch._C.Generator, metaclass=_GeneratorType):
    """``torch.Generator(device="cuda")``: a host generator (device randomness is drawn on the host) that says
    it belongs to the device; a generator made before the shadow device, or on the host, is still a Generator."""

    def __new__(cls, device: Any = "cpu") -> Any:
        if torch.device(device).type != "cuda":
            return torch._C.Generator(device)
        generator = super().__new__(cls, "cpu")
        generator.shadow_device = state.device(torch.device(device).index)
        return generator

    @property
    def device(self) -> torch.device:
        return self.shadow_device


class ShadowGraph:
    """``torch.cuda.CUDAGraph``: capture and replay are not emulated (noted, and refused)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        note(NoteKind.NOT_EMULATED, "torch.cuda.CUDAGraph", "CUDA graph capture and replay")
        raise RuntimeError("shadow device: CUDA graphs are not emulated; run the eager path")


def current_stream(device: Any = None) -> ShadowStream:
    index = _index(device)
    streams = getattr(_STREAMS, "current", None)
    if streams is None:
        streams = _STREAMS.current = {}
    stream = streams.get(index)
    return stream if stream is not None else default_stream(index)


def default_stream(device: Any = None) -> ShadowStream:
    return ShadowStream(_index(device), stream_id=0)


def set_stream(stream: torch.Stream | None) -> None:
    if stream is None:
        return
    streams = getattr(_STREAMS, "current", None)
    if streams is None:
        streams = _STREAMS.current = {}
    streams[stream.device_index] = stream


def synchronize(device: Any = None) -> None:
    _index(device)
    state.reported("torch.cuda.synchronize", None, _nothing)


def accelerator_synchronize(device: Any = None) -> None:
    _index(device)
    state.reported("torch.accelerator.synchronize", None, _nothing)


def device_count() -> int:
    return state.STATE.spec.count


def current_device() -> int:
    return state.current_index()


def set_device(device: Any) -> None:
    index = _index(device)
    if index >= 0:
        state.set_current_index(index)


def exchange_device(device: int) -> int:
    previous = state.current_index()
    if device >= 0:
        state.set_current_index(device)
    return previous


def get_device_name(device: Any = None) -> str:
    _index(device)
    return state.STATE.spec.name


def get_device_capability(device: Any = None) -> tuple[int, int]:
    _index(device)
    return state.STATE.spec.capability


def get_device_properties(device: Any = None) -> SimpleNamespace:
    _index(device)
    spec = state.STATE.spec
    return SimpleNamespace(name=spec.name, major=spec.capability[0], minor=spec.capability[1],
                           total_memory=spec.total_memory, multi_processor_count=spec.multi_processor_count,
                           is_integrated=0, is_multi_gpu_board=0, warp_size=32, L2_cache_size=40 * 1024**2,
                           max_threads_per_multi_processor=2048, regs_per_multiprocessor=65536,
                           gcnArchName="", uuid="shadow-cuda-0")


def mem_get_info(device: Any = None) -> tuple[int, int]:
    _index(device)
    total = state.STATE.spec.total_memory
    return total, total


_DEBUG_MODE = {"mode": 0}


def get_sync_debug_mode() -> int:
    return _DEBUG_MODE["mode"]


def set_sync_debug_mode(debug_mode: int | str) -> None:
    names = {"default": 0, "warn": 1, "error": 2}
    _DEBUG_MODE["mode"] = names[debug_mode] if isinstance(debug_mode, str) else int(debug_mode)


def get_rng_state(device: Any = None) -> torch.Tensor:
    """Device randomness is drawn from the host generator under the shadow device."""
    return torch.get_rng_state()


def _nothing() -> None:
    """The work an emulated wait waits for has already run on the host."""


def _returns(value: Any) -> Any:
    def answer(*args: Any, **kwargs: Any) -> Any:
        return value
    return answer


def _no_op(*args: Any, **kwargs: Any) -> None:
    return None


# torch.cuda attribute → its one-GPU answer.
CUDA: dict[str, Any] = {
    "is_available": _returns(True), "is_initialized": _returns(True), "init": _no_op, "_lazy_init": _no_op,
    "device_count": device_count, "current_device": current_device, "set_device": set_device,
    "_exchange_device": exchange_device, "_maybe_exchange_device": exchange_device,
    "get_device_name": get_device_name, "get_device_capability": get_device_capability,
    "get_device_properties": get_device_properties, "is_bf16_supported": _returns(True),
    "get_arch_list": lambda: ["sm_80", "sm_90"], "synchronize": synchronize, "current_stream": current_stream,
    "default_stream": default_stream, "set_stream": set_stream, "Stream": ShadowStream, "Event": ShadowEvent,
    "CUDAGraph": ShadowGraph, "is_current_stream_capturing": _returns(False),
    "get_sync_debug_mode": get_sync_debug_mode, "set_sync_debug_mode": set_sync_debug_mode,
    "memory_allocated": _returns(0), "max_memory_allocated": _returns(0), "memory_reserved": _returns(0),
    "max_memory_reserved": _returns(0), "reset_peak_memory_stats": _no_op, "reset_max_memory_allocated": _no_op,
    "empty_cache": _no_op, "mem_get_info": mem_get_info, "memory_stats": lambda *a, **k: {},
    "ipc_collect": _no_op, "get_rng_state": get_rng_state, "set_rng_state": _no_op,
}
NVTX: dict[str, Any] = {"range_push": _returns(0), "range_pop": _returns(0), "range_start": _returns(0),
                        "range_end": _no_op, "mark": _no_op}
ACCELERATOR: dict[str, Any] = {
    "is_available": _returns(True), "current_accelerator": lambda *a, **k: torch.device("cuda"),
    "device_count": device_count, "current_device_index": current_device, "current_device_idx": current_device,
    "set_device_index": set_device, "set_device_idx": set_device, "current_stream": current_stream,
    "set_stream": set_stream, "synchronize": accelerator_synchronize,
}
