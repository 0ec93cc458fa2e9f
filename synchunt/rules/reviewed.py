"""Reviewed aten ops that are not host syncs on a GPU, each with its reason and where that is stated.

Two kinds of op need an entry. Ops tagged ``dynamic_output_shape`` or ``data_dependent_output`` that map to
no rule (the registry meta-test requires a rule or an entry here for every such op). And ops whose CPU kernel
reads a value on the host where the CUDA kernel does not: the runtime guard runs them as one opaque call, so
a CPU run does not report those reads as latent syncs. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

_NATIVE = "pytorch aten/src/ATen/native/"


@dataclass(frozen=True)
class NotAHostSync:
    """``torch.ops.aten.<packet>`` (every overload) does not make the host wait on a GPU."""

    packet: str
    reason: str
    source: str


NOT_HOST_SYNCS: tuple[NotAHostSync, ...] = (
    NotAHostSync(
        "_assert_async",
        "a device-side assert: the CUDA kernel checks the value without a copy; the CPU kernel reads it",
        "https://pytorch.org/docs/stable/generated/torch._assert_async.html "
        "(for CUDA tensors, we DO NOT synchronize)",
    ),
    NotAHostSync(
        "masked_fill",
        "a one-element host value is read from host memory, a device value is used by the kernel itself",
        _NATIVE + "cuda/Indexing.cu masked_fill__cuda (Tensor value)",
    ),
    NotAHostSync(
        "masked_fill_",
        "a one-element host value is read from host memory, a device value is used by the kernel itself",
        _NATIVE + "cuda/Indexing.cu masked_fill__cuda (Tensor value)",
    ),
)
