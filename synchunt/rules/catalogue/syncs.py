"""SH3xx — explicit syncs: calls whose job is to make the host wait, and blocking calls no other rule explains."""

from __future__ import annotations

from synchunt.rules.catalogue.refs import CUDA_SEMANTICS_DOC, SYNC_DEBUG_DOC
from synchunt.rules.model import GuardPatch, Rule, RuntimeCall, WaitScope


def _calls(*names: str, standalone: bool = True, waits_on: WaitScope = WaitScope.DEVICE) -> tuple[RuntimeCall, ...]:
    return tuple(RuntimeCall(name, standalone=standalone, waits_on=waits_on) for name in names)


SYNC_RULES: tuple[Rule, ...] = (
    Rule(
        code="SH300",
        name="unclassified-blocking-call",
        title="A blocking runtime call no specific rule explains",
        what_it_does="Reports a host-blocking runtime or driver call (or a sync torch's sync debug mode saw) that "
        "no other rule explains, under the call's own name, so that no stall is dropped.",
        why_bad="The host waited for the device here; the catalogue does not know why yet, which is itself worth "
        "a look (an extension, a new torch op, a copy whose direction the trace does not show).",
        example="out = torch.ops.myext.gather_rows(table, idx)  # waits inside the op; no rule knows the op",
        use_instead="out = torch.ops.myext.gather_rows_async(table, idx)  # keep it on the device; read after an "
        "event",
        mechanism="The trace shows a blocking call (a stream/device/event sync, a synchronous copy, or a "
        "`cuda_sync` event of a blocking kind) whose enclosing ops match no rule.",
        fingerprint="a blocking `cuda_runtime`/`cuda_driver` call or `cuda_sync` event under no catalogue op, or "
        "under one whose rule does not apply",
        fix="find the call in the op chain and stack; keep the value on the device or move the read to where "
        "waiting is free",
        references=(SYNC_DEBUG_DOC,),
        catch_all=True,
    ),
    Rule(
        code="SH301",
        name="device-synchronize",
        title="`torch.cuda.synchronize()`",
        what_it_does="Flags whole-device synchronization: `torch.cuda.synchronize()`, "
        "`torch.accelerator.synchronize()`.",
        why_bad="It drains every stream, including unrelated ones; it is invisible to "
        "`torch.cuda.set_sync_debug_mode`.",
        example="torch.cuda.synchronize()",
        use_instead="compute_stream.wait_stream(load_stream)",
        mechanism="`cudaDeviceSynchronize` waits for all work on all streams of the device.",
        fingerprint="`cudaDeviceSynchronize` | `hipDeviceSynchronize` | `cuCtxSynchronize` (`cuda_sync` Context "
        "Sync)",
        fix="`stream.wait_stream(other)` or `event.wait()` to order work on the device",
        references=(SYNC_DEBUG_DOC,),
        runtime_calls=_calls("cudaDeviceSynchronize", "cudaThreadSynchronize", "hipDeviceSynchronize",
                             "cuCtxSynchronize"),
        sync_kinds=("Context Sync",),
        guard_patches=(GuardPatch("torch.cuda.synchronize", needs_cuda=True, op="torch.cuda.synchronize"),
                       GuardPatch("torch.accelerator.synchronize", needs_cuda=True,
                                  op="torch.accelerator.synchronize")),
        lint_forms=("synchronize",),
    ),
    Rule(
        code="SH302",
        name="event-synchronize",
        title="`Event.synchronize()`",
        what_it_does="Flags host waits on events: `torch.cuda.Event.synchronize()`.",
        why_bad="The host stalls until the device reaches the event; `event.wait()` orders the work without "
        "blocking the host.",
        example="layer_done[i].synchronize()",
        use_instead="torch.cuda.current_stream().wait_event(layer_done[i])",
        mechanism="`cudaEventSynchronize` blocks the host until the event has completed.",
        fingerprint="`cudaEventSynchronize` | `hipEventSynchronize` | `cuEventSynchronize` (`cuda_sync` Event Sync)",
        fix="`event.wait(stream)` (a device-side wait) or poll `event.query()`, which does not block",
        references=(SYNC_DEBUG_DOC,),
        runtime_calls=_calls("cudaEventSynchronize", "hipEventSynchronize", "cuEventSynchronize",
                             waits_on=WaitScope.EVENT),
        sync_kinds=("Event Sync",),
        guard_patches=(GuardPatch("torch.cuda.Event.synchronize", needs_cuda=True),),
        lint_forms=("synchronize",),
    ),
    Rule(
        code="SH303",
        name="stream-synchronize",
        title="`Stream.synchronize()`",
        what_it_does="Flags host waits on a whole stream: `torch.cuda.Stream.synchronize()`, "
        "`torch.cuda.current_stream().synchronize()`.",
        why_bad="The host cannot queue more work until the stream has drained.",
        example="load_stream.synchronize()",
        use_instead="torch.cuda.current_stream().wait_stream(load_stream)",
        mechanism="`cudaStreamSynchronize` blocks the host until the stream is idle.",
        fingerprint="`cudaStreamSynchronize` | `hipStreamSynchronize` | `cuStreamSynchronize` with no enclosing "
        "catalogue op",
        fix="`other_stream.wait_stream(stream)`; record an event and wait on it on the device",
        references=(SYNC_DEBUG_DOC,),
        runtime_calls=_calls("cudaStreamSynchronize", "hipStreamSynchronize", "cuStreamSynchronize",
                             standalone=False, waits_on=WaitScope.STREAM),
        sync_kinds=("Stream Sync",),
        guard_patches=(GuardPatch("torch.cuda.Stream.synchronize", needs_cuda=True),),
        lint_forms=("synchronize",),
    ),
    Rule(
        code="SH304",
        name="allocator-free-sync",
        title="Device memory freed back to the driver (`cudaFree`, `empty_cache`)",
        what_it_does="Flags `cudaFree`/`cudaFreeHost`/`hipFree` calls on a profiled thread: "
        "`torch.cuda.empty_cache()`, the caching allocator releasing blocks after an out-of-memory retry, or "
        "pinned host memory freed.",
        why_bad="Freeing device (or pinned host) memory synchronizes the whole device, so a free in a hot loop "
        "stalls the host like `torch.cuda.synchronize()`, without any sync in the Python source.",
        example="torch.cuda.empty_cache()  # every step",
        use_instead="# keep cached blocks; reduce fragmentation instead\n"
        "# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        mechanism="`cudaFree` and `cudaFreeHost` implicitly synchronize the device before releasing the memory.",
        fingerprint="`cudaFree` | `cudaFreeHost` | `hipFree` | `hipHostFree` | `cuMemFree_v2` on the host thread",
        fix="do not call `torch.cuda.empty_cache()` in loops; size batches so the allocator never retries after "
        "an out-of-memory error; allocate pinned buffers once",
        references=(CUDA_SEMANTICS_DOC,),
        runtime_calls=_calls("cudaFree", "cudaFreeHost", "hipFree", "hipHostFree", "hipFreeHost", "cuMemFree_v2",
                             "cuMemFreeHost"),
    ),
)
