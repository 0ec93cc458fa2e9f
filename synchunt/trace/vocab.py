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

# Host-blocking runtime calls: the host thread returns only when the device has caught up.
BLOCKING_RUNTIME_CALLS: frozenset[str] = frozenset({
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D",
    "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cuStreamSynchronize", "cuCtxSynchronize",
    "cuEventSynchronize", "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2",
    "hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize", "hipMemcpy", "hipMemcpyWithStream",
})
# Asynchronous copies: blocking only when the host side is pageable (the driver stages them).
ASYNC_COPY_CALLS: frozenset[str] = frozenset({"cudaMemcpyAsync", "hipMemcpyAsync", "cuMemcpyAsync"})
# Never a host stall, even though a `cuda_sync` event may be recorded for them.
NON_BLOCKING_CALLS: frozenset[str] = frozenset({"cudaEventQuery", "hipEventQuery", "cudaStreamWaitEvent",
                                                "hipStreamWaitEvent", "cudaStreamQuery", "hipStreamQuery"})
# `cuda_sync` kinds that stall the host (Stream Wait Event is a device-side wait).
BLOCKING_SYNC_KINDS: frozenset[str] = frozenset({"Stream Sync", "Event Sync", "Context Sync"})

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
