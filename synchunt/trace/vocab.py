"""The Kineto trace vocabulary in one place: categories, runtime call names, argument keys."""

from __future__ import annotations

# Legacy (torch <= 1.9) category names → current ones.
LEGACY_CATEGORIES: dict[str, str] = {
    "Operator": "cpu_op",
    "Runtime": "cuda_runtime",
    "Kernel": "kernel",
    "Memcpy": "gpu_memcpy",
    "Memset": "gpu_memset",
    "Driver": "cuda_driver",
}

CPU_OP = "cpu_op"
# cpu_op events the dispatcher records for its own steps, not ops of the code: entering a tensor subclass's
# __torch_dispatch__ (the shadow device's tensors), restoring its thread-local state.
DISPATCHER_STEPS = frozenset({"PythonSubclass", "PythonTLSSnapshot"})
PYTHON_FUNCTION = "python_function"
USER_ANNOTATION = "user_annotation"
RUNTIME = "cuda_runtime"
DRIVER = "cuda_driver"
KERNEL = "kernel"
MEMCPY = "gpu_memcpy"
MEMSET = "gpu_memset"
CUDA_SYNC = "cuda_sync"

# Any of these in a trace means a device was traced: syncs can be confirmed from runtime evidence.
DEVICE_CATEGORIES: frozenset[str] = frozenset({RUNTIME, DRIVER, KERNEL, MEMCPY, MEMSET, CUDA_SYNC,
                                               "gpu_user_annotation"})
# Categories that run on a host thread and nest (the containment tree is built over these).
HOST_CATEGORIES: frozenset[str] = frozenset({CPU_OP, PYTHON_FUNCTION, USER_ANNOTATION, RUNTIME, DRIVER})

# Categories whose events are host-side API calls into the device runtime or driver.
RUNTIME_CATEGORIES: frozenset[str] = frozenset({RUNTIME, DRIVER})
# Device-side activities: what runs on a stream.
DEVICE_ACTIVITY_CATEGORIES: frozenset[str] = frozenset({KERNEL, MEMCPY, MEMSET})
# The kinds a `cuda_sync` event's `args.cuda_sync_kind` takes (Kineto's CUPTI synchronization records).
SYNC_KINDS: frozenset[str] = frozenset({"Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event"})
# Copy directions as they appear in `gpu_memcpy` activity names ("Memcpy DtoH (Device -> Pageable)").
COPY_DIRECTIONS: tuple[str, ...] = ("DtoH", "HtoD", "DtoD", "HtoH", "PtoP")
PAGEABLE_MARK = "Pageable"


def copy_direction(memcpy_name: str) -> str | None:
    """``"DtoH"`` for ``"Memcpy DtoH (Device -> Pageable)"``; ``None`` when the name says no direction."""
    return next((direction for direction in COPY_DIRECTIONS if direction in memcpy_name), None)


def is_pageable_device_to_host(memcpy_name: str) -> bool:
    """A device-to-host copy whose host side is pageable memory (the driver makes it synchronous)."""
    return copy_direction(memcpy_name) == "DtoH" and PAGEABLE_MARK in memcpy_name


# Argument keys of interest (everything else in `args` is skipped while decoding).
ARG_CORRELATION = "correlation"
ARG_EXTERNAL_ID = "External id"
ARG_PYTHON_ID = "Python id"
ARG_PYTHON_PARENT_ID = "Python parent id"
ARG_INPUT_TYPE = "Input type"
ARG_CONCRETE_INPUTS = "Concrete Inputs"
ARG_CALL_STACK = "Call stack"

# Key under which synchunt's capture stores what the trace cannot say itself.
SYNCHUNT_METADATA_KEY = "synchunt"
# Under it: the runtime guard's records from the capture's guard pass.
GUARD_PASS_KEY = "guard"
SHADOW_KEY = "shadow"  # what the shadow device could not follow, and how many device tensors the code made
