"""The guard's argument predicates: one per ``GuardOp.when`` name in the catalogue.

Whether an op syncs on a GPU depends on the op and its arguments, not on the device it runs on, so the same
predicates flag latent syncs in a CPU run. A tensor in an all-host run stands for the device tensor the same
code builds on a GPU, except where the answer turns on a tensor's device (docs/guard.md, "CPU conventions").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from synchunt.guard.call import HOST_DEVICE_TYPES, OpCall, on_device
from synchunt.guard.scope import FLAGS

_MASK_DTYPES = (torch.bool, torch.uint8)


def _device_type(value: Any) -> str | None:
    if value is None:
        return None
    return torch.device(value).type


def _mask_indices(indices: Sequence[Any] | None) -> list[torch.Tensor]:
    return [i for i in indices or () if isinstance(i, torch.Tensor) and i.dtype in _MASK_DTYPES]


def _mask_would_sync(mask: torch.Tensor, target: torch.Tensor) -> bool:
    # A device mask is counted on the device and read back; a host mask only syncs in an all-host run,
    # where it stands for the device mask the same code builds on a GPU.
    return on_device(mask) or not on_device(target)


def bool_index(call: OpCall) -> bool:
    target = call.arg("self")
    return any(_mask_would_sync(mask, target) for mask in _mask_indices(call.arg("indices")))


def _masked_fill_fast_path(call: OpCall) -> bool:
    """ATen's ``canDispatchToMaskedFill``: one mask on self's device and a one-element CPU value."""
    target, value = call.arg("self"), call.arg("values")
    if call.arg("accumulate") or not isinstance(value, torch.Tensor):
        return False
    if value.numel() != 1 or value.device.type != "cpu":
        return False
    indices = [i for i in call.arg("indices") or () if isinstance(i, torch.Tensor)]
    return (len(indices) == 1 and indices[0].dtype in _MASK_DTYPES
            and indices[0].device == target.device)


def bool_index_tensor_value(call: OpCall) -> bool:
    return bool_index(call) and not _masked_fill_fast_path(call)


def no_output_size(call: OpCall) -> bool:
    return isinstance(call.arg("repeats"), torch.Tensor) and call.arg("output_size") is None


def histc_min_eq_max(call: OpCall) -> bool:
    return call.arg("min") == call.arg("max")


def truthiness(call: OpCall) -> bool:
    return FLAGS.truthiness > 0


def not_truthiness(call: OpCall) -> bool:
    return FLAGS.truthiness == 0


def _copy_ends(call: OpCall) -> tuple[torch.Tensor | None, str | None, torch.Tensor | None, str | None]:
    """(source, source device type, destination tensor if allocated, destination device type), once per call."""
    ends = call.memo.get("copy-ends")
    if ends is None:
        ends = call.memo["copy-ends"] = _find_copy_ends(call)
    return ends


def _find_copy_ends(call: OpCall) -> tuple[torch.Tensor | None, str | None, torch.Tensor | None, str | None]:
    if call.arg("src") is None:  # a copy that allocates its result (``_to_copy``), not one into ``self``
        source = call.arg("self")
        if not isinstance(source, torch.Tensor):  # a wrapped number arrives as a Python scalar
            return None, None, None, None
        target = _device_type(call.arg("device")) or source.device.type
        return source, source.device.type, None, target
    destination, source = call.arg("self"), call.arg("src")
    if not isinstance(source, torch.Tensor) or not isinstance(destination, torch.Tensor):
        return None, None, None, None
    return source, source.device.type, destination, destination.device.type


def device_to_host(call: OpCall) -> bool:
    source, source_type, _, target_type = _copy_ends(call)
    if source is None or source_type in HOST_DEVICE_TYPES or target_type != "cpu":
        return False
    # A non_blocking copy either lands in pinned memory (asynchronous) or is SH203's pageable case.
    return not call.arg("non_blocking")


def host_to_device_blocking(call: OpCall) -> bool:
    """A copy from host memory to a device without ``non_blocking``: ``memcpy_and_sync`` waits for the stream.
    Nothing to copy is no wait: ``copy_`` returns before any memcpy for a zero-element tensor
    (``torch.tensor([], device=...)``)."""
    source, source_type, _, target_type = _copy_ends(call)
    if source is None or source_type != "cpu" or target_type in HOST_DEVICE_TYPES or target_type is None:
        return False
    return not call.arg("non_blocking") and source.numel() > 0


def host_index_into_device(call: OpCall) -> bool:
    """A host index (long or mask) into a device tensor: ATen copies it to the device first, blocking."""
    target = call.arg("self")
    if not isinstance(target, torch.Tensor) or not on_device(target):
        return False
    return any(isinstance(index, torch.Tensor) and index.device.type == "cpu" and index.dim() > 0
               for index in call.arg("indices") or ())


def no_num_classes(call: OpCall) -> bool:
    """``one_hot`` without ``num_classes`` sizes its output from ``input.max()``."""
    return call.arg("num_classes") in (None, -1)


def condition_only(call: OpCall) -> bool:
    """``torch.where(condition)``: the one-argument overload, ``nonzero(condition, as_tuple=True)``."""
    return call.func._overloadname == "default"


def check_errors(call: OpCall) -> bool:
    """An ``_ex`` linalg op asked to raise on a failed factorization reads its ``info`` on the host."""
    return bool(call.arg("check_errors"))


def _host_lengths_beside_device(call: OpCall) -> bool:
    """``ctc_loss`` given its lengths as host tensors and its log-probs on a device: ATen's fast path
    (LossCTC.cpp ``ctc_loss``) reads the lengths where they are, as int lists."""
    lengths = (call.arg("input_lengths"), call.arg("target_lengths"))
    log_probs = call.arg("log_probs")
    return (isinstance(log_probs, torch.Tensor) and on_device(log_probs)
            and not any(isinstance(length, torch.Tensor) and on_device(length) for length in lengths))


def tensor_lengths(call: OpCall) -> bool:
    """``ctc_loss`` with tensor lengths copies them to the host to walk them: a wait when one of them is on a
    device. Host lengths beside device log-probs are read where they are (their copy to the device is SH202's);
    in an all-host run they stand for the device lengths the same code builds on a GPU."""
    if not all(isinstance(call.arg(name), torch.Tensor) for name in ("input_lengths", "target_lengths")):
        return False
    return not _host_lengths_beside_device(call)


def native_ctc_int_lengths(call: OpCall) -> bool:
    """``ctc_loss`` with int lengths on ATen's own kernel, which copies them host to device, blocking. cuDNN's
    kernel (1-D int32 targets in host memory) is left out: no statement covers it. Host tensor lengths beside
    device log-probs take the same kernel (read as int lists first)."""
    if isinstance(call.arg("input_lengths"), torch.Tensor) and not _host_lengths_beside_device(call):
        return False
    targets = call.arg("targets")
    cudnn_targets = (isinstance(targets, torch.Tensor) and targets.dim() == 1 and targets.dtype == torch.int32
                     and targets.device.type == "cpu")
    return not cudnn_targets


def tensor_std(call: OpCall) -> bool:
    """``normal(mean, std)`` checks ``std >= 0`` on the host when ``std`` is a tensor."""
    return isinstance(call.arg("std"), torch.Tensor)


def _is_pinned(tensor: torch.Tensor | None) -> bool:
    return tensor is not None and tensor.is_pinned()


def pageable_non_blocking(call: OpCall) -> bool:
    """A ``non_blocking`` device-to-host copy into pageable memory. Only that direction: from pageable memory to
    the device the driver stages the data and returns without waiting for the device (no D2H sync)."""
    if not call.arg("non_blocking"):
        return False
    source, source_type, destination, target_type = _copy_ends(call)
    if source is None or source_type in HOST_DEVICE_TYPES or target_type != "cpu" or source.numel() == 0:
        return False
    # _to_copy pins the buffer it allocates; copy_ writes into the caller's tensor
    return destination is not None and not _is_pinned(destination)


def has_boxes(call: OpCall) -> bool:
    """torchvision's CUDA ``nms`` returns at once when there are no boxes; otherwise it reads its mask on the host."""
    boxes = call.arg("dets")
    return isinstance(boxes, torch.Tensor) and boxes.numel() > 0


Predicate = Callable[[OpCall], bool]

class _Declared:
    """An overload's arguments by name, as the types its schema declares (``Tensor``, ``float``)."""

    def __init__(self, func: torch._ops.OpOverload) -> None:
        self._types = {argument.name: str(argument.type) for argument in func._schema.arguments}

    def arg(self, name: str) -> str | None:
        return self._types.get(name)


# Predicates that hold for some overloads of their op only, by schema: the others never meet them, so the table
# leaves them out and they run as ops outside the catalogue (``torch.where(c, a, b)``, ``normal(mean, 1.0)``).
OVERLOADS: dict[Predicate, Callable[[torch._ops.OpOverload], bool]] = {
    condition_only: lambda func: func._overloadname == "default",
    tensor_std: lambda func: _Declared(func).arg("std") == "Tensor",
}

# The predicates that hold only for a call that crosses to or from a device: a tensor of the call is on a device,
# or the call names one as its target. In a process that can hold no device tensor they never hold, so the kernel
# route leaves the ops that only they classify (the copies) to ATen until a device can exist (docs/guard.md,
# "Overhead"), and where one can, checks the call's devices before anything else.
CROSSING: frozenset[Predicate] = frozenset({device_to_host, pageable_non_blocking, host_to_device_blocking,
                                            host_index_into_device})

PREDICATES: dict[str, Predicate] = {
    "bool-index": bool_index,
    "bool-index-tensor-value": bool_index_tensor_value,
    "no-output-size": no_output_size,
    "histc-min-eq-max": histc_min_eq_max,
    "not-truthiness": not_truthiness,
    "truthiness": truthiness,
    "device-to-host": device_to_host,
    "pageable-non-blocking": pageable_non_blocking,
    "host-to-device-blocking": host_to_device_blocking,
    "tensor-std": tensor_std,
    "host-index-into-device": host_index_into_device,
    "no-num-classes": no_num_classes,
    "condition-only": condition_only,
    "check-errors": check_errors,
    "tensor-lengths": tensor_lengths,
    "native-ctc-int-lengths": native_ctc_int_lengths,
    "has-boxes": has_boxes,
}


