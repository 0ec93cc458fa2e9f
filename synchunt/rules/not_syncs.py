"""Reviewed "not a host sync" entries on the trace side: what looks like a sync in a trace but is not one.

Each entry says why, so a reader can check the reasoning; the detector reads these instead of keeping lists.
(The guard's reviewed aten packets live beside the guard's own entries.)
"""

from __future__ import annotations

import msgspec


class NotSyncOp(msgspec.Struct, frozen=True):
    """An aten op (optionally only under another op) that is not a sync although a rule names it."""

    op: str
    under: str | None
    reason: str


class NonBlockingCall(msgspec.Struct, frozen=True):
    """A runtime call, or a ``cuda_sync`` event kind, that never stalls the host."""

    name: str
    reason: str


NOT_SYNC_OPS: tuple[NotSyncOp, ...] = (
    NotSyncOp("aten::_local_scalar_dense", under="aten::_index_put_impl_",
              reason="the masked-fill fast path of `x[mask] = 5` reads its one-element CPU value with `.item()`"),
)
# Host reads under the reviewed ops of ``synchunt.rules.reviewed`` (their CPU kernels read on the host, their
# device kernels do not) are not syncs either: the detector reads both lists.

NON_BLOCKING_CALLS: tuple[NonBlockingCall, ...] = (
    NonBlockingCall("cudaEventQuery", "polls an event and returns at once (its `Event Sync` record does not block)"),
    NonBlockingCall("hipEventQuery", "polls an event and returns at once"),
    NonBlockingCall("cuEventQuery", "polls an event and returns at once"),
    NonBlockingCall("cudaStreamQuery", "polls a stream and returns at once"),
    NonBlockingCall("hipStreamQuery", "polls a stream and returns at once"),
    NonBlockingCall("cuStreamQuery", "polls a stream and returns at once"),
    NonBlockingCall("cudaStreamWaitEvent", "a device-side wait: the stream waits, the host does not"),
    NonBlockingCall("hipStreamWaitEvent", "a device-side wait: the stream waits, the host does not"),
    NonBlockingCall("cuStreamWaitEvent", "a device-side wait: the stream waits, the host does not"),
)

NON_BLOCKING_SYNC_KINDS: tuple[NonBlockingCall, ...] = (
    NonBlockingCall("Stream Wait Event", "a GPU-to-GPU dependency recorded by `cudaStreamWaitEvent`"),
)


class ProfilerOwnSync(msgspec.Struct, frozen=True):
    """The device synchronize torch.profiler itself issues when a recording window closes (so that the device
    work of the window is in the trace): not the target's sync.

    With Python stacks it sits under the profiler's own frames; without them it is a device synchronize with no
    enclosing op or annotation, after the thread's last ``ProfilerStep#N``, and the thread's last runtime call.
    """

    frames: tuple[str, ...]
    calls_kind: str  # the rule code whose runtime calls are device synchronizes
    reason: str


PROFILER_OWN_SYNC = ProfilerOwnSync(
    frames=("torch/profiler/", "torch/autograd/profiler"),
    calls_kind="SH301",
    reason="torch.profiler synchronizes the device when its recording window closes",
)
