"""One aten op under the shadow device: decide where its result lives, run it on the host data, wrap it.

Called by :class:`~synchunt.shadow.tensor.ShadowTensor`'s ``__torch_dispatch__`` (an op with a shadow tensor
argument) and by the CUDA backend fallback (a factory asked for ``device='cuda'``). The op itself runs with
the guard's ``PreDispatch`` key excluded: the runtime guard has already seen the op the user called, with the
tensors as the user holds them (on the device); the host op underneath is the emulation's, not the user's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from synchunt.shadow import cudnn, state
from synchunt.shadow.notes import NoteKind, note, user_frame
from synchunt.shadow.ops import HOST_RESULTS, OpInfo, op_info
from synchunt.shadow.tensor import HOST, ShadowTensor

_PRE_DISPATCH = torch._C.DispatchKey.PreDispatch
_is_included = torch._C._dispatch_tls_is_dispatch_key_included
_is_excluded = torch._C._dispatch_tls_is_dispatch_key_excluded
_set_excluded = torch._C._dispatch_tls_set_dispatch_key_excluded
_MATH_ATTENTION = int(torch.nn.attention.SDPBackend.MATH)


class _Scan:
    """What the arguments of one op hold: the device of its device tensors, and a host operand if any."""

    __slots__ = ("device", "first", "host_operand")

    def __init__(self) -> None:
        self.device: torch.device | None = None
        self.first: ShadowTensor | None = None  # the first device tensor
        self.host_operand: torch.Tensor | None = None

    def unwrap(self, value: Any) -> Any:
        if isinstance(value, ShadowTensor):
            if value.is_cuda:
                if self.device is None:
                    self.device, self.first = value.device, value
            elif value.dim() > 0:
                self.host_operand = value
            return value.host
        if isinstance(value, torch.Tensor):
            if value.is_cpu and value.dim() > 0:
                self.host_operand = value
            return value
        if isinstance(value, (list, tuple)) and value:
            return type(value)(self.unwrap(item) for item in value)
        return value


def _put(info: OpInfo, slot: tuple[int, str] | None, args: list[Any], kwargs: dict[str, Any], value: Any) -> None:
    if slot is None:
        return
    position, name = slot
    if name in kwargs:
        kwargs[name] = value
    elif position < len(args):
        args[position] = value


def _call(func: torch._ops.OpOverload, args: list[Any], kwargs: dict[str, Any]) -> Any:
    kernel = cudnn.host_kernel(func) or func._op  # a CUDA-only op (cuDNN's, a fused cell): its host stand-in
    return _host(kernel, *args, **kwargs)


def _host(kernel: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``kernel`` run as the emulation's own work, unseen by the guard (which saw the user's op)."""
    if not _is_included(_PRE_DISPATCH) or _is_excluded(_PRE_DISPATCH):
        return kernel(*args, **kwargs)
    _set_excluded(_PRE_DISPATCH, True)
    try:
        return kernel(*args, **kwargs)
    finally:
        _set_excluded(_PRE_DISPATCH, False)


def run(func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``func`` on the host data of its arguments; its tensor results live where CUDA would put them."""
    info = op_info(func)
    if info.special:
        return _SPECIAL[info.packet](func, args, kwargs)
    scan = _Scan()
    unwrap = scan.unwrap
    host_args = [unwrap(value) for value in args]
    host_kwargs = {name: unwrap(value) for name, value in kwargs.items()} if kwargs else {}
    target = scan.device
    asked = info.value(info.device, host_args, host_kwargs) if info.device is not None else None
    if asked is not None:
        asked = asked if isinstance(asked, torch.device) else torch.device(asked)
        if asked.type == "cuda":
            target = state.device(asked.index)
            _put(info, info.device, host_args, host_kwargs, HOST)
        else:
            target = None
    pin = info.pin_memory is not None and bool(info.value(info.pin_memory, host_args, host_kwargs))
    if pin:
        _put(info, info.pin_memory, host_args, host_kwargs, False)
    followed = info.custom and scan.first is not None and state.knows(info.name)
    if info.custom and not followed:
        note(NoteKind.CUSTOM_OP, info.name, "not an aten op: it ran on the host data, and what its device kernel "
             "does (a sync inside it) is not followed")
    elif target is not None and scan.host_operand is not None and not info.accepts_host:
        operand = scan.host_operand
        note(NoteKind.MIXED_DEVICES, info.name,
             f"a host tensor ({str(operand.dtype).removeprefix('torch.')}{list(operand.shape)}) beside device "
             "tensors: a GPU raises 'Expected all tensors to be on the same device'; run as if it were on the device")
    try:
        if followed and scan.first is not None and scan.first.numel() > 0:
            # a library op whose device kernel waits inside (the catalogue says how often): reported as on a GPU;
            # given nothing to work on, such a kernel returns before its copies
            out = state.reported(info.name, scan.first, lambda: _call(func, host_args, host_kwargs))
        else:
            out = _call(func, host_args, host_kwargs)
    except NotImplementedError as error:
        if "CPU" not in str(error):
            raise
        note(NoteKind.NO_HOST_KERNEL, info.name, "a CUDA-only op with no host kernel to emulate it")
        file, line, _ = user_frame()
        raise RuntimeError(f"shadow device: {info.name}, called at {file}:{line}, has no host kernel to emulate "
                           "it with (a CUDA-only op)") from None
    if info.writes is not None:
        return _written(func, info, args, kwargs, out)
    if target is None and not pin and (not info.may_pin or not _pins(info, args, kwargs, scan)):
        return out
    if target is not None and info.packet in HOST_RESULTS:
        kept = HOST_RESULTS[info.packet]
        return type(out)(item if position in kept else ShadowTensor(item, target) for position, item in enumerate(out))
    return _wrap(out, target if target is not None else HOST)


def _pins(info: OpInfo, args: tuple[Any, ...], kwargs: dict[str, Any], scan: _Scan) -> bool:
    """A view of a pinned buffer is pinned; so is the host buffer of a ``non_blocking`` device-to-host copy."""
    for slot in info.aliases:
        source = info.value(slot, args, kwargs)
        if isinstance(source, ShadowTensor) and source.device.type == "cpu":
            return True
    return (info.packet == "_to_copy" and scan.device is not None
            and bool(info.value(info.non_blocking, args, kwargs)))


def _wrap(out: Any, device: torch.device) -> Any:
    """The op's tensor results as shadow tensors on ``device`` (cuda:N, or the host for pinned memory)."""
    if isinstance(out, torch.Tensor):
        return ShadowTensor(out, device)
    if isinstance(out, (tuple, list)):
        return type(out)(ShadowTensor(item, device) if isinstance(item, torch.Tensor) else item for item in out)
    return out


def _written(func: torch._ops.OpOverload, info: OpInfo, args: tuple[Any, ...], kwargs: dict[str, Any],
             out: Any) -> Any:
    """An in-place or ``out=`` op returns the very tensors it wrote (the caller's, not new wrappers), with the
    sizes and strides their host data now has (``resize_``, ``unsqueeze_``, an ``out=`` op that resized)."""
    assert info.writes is not None
    written = [info.value(slot, args, kwargs) if slot is not None else None for slot in info.writes]
    for tensor in written:
        if isinstance(tensor, ShadowTensor):
            _follow_metadata(tensor)
    if len(written) == 1:
        return written[0]
    return tuple(tensor if tensor is not None else item for tensor, item in zip(written, out, strict=True))


def _follow_metadata(tensor: ShadowTensor) -> None:
    host = tensor.host
    if tensor.shape == host.shape and tensor.stride() == host.stride() and \
            tensor.storage_offset() == host.storage_offset():
        return
    # The wrapper's own metadata, changed without dispatching (as torch's return_and_correct_aliasing does).
    with torch.utils._mode_utils.no_dispatch():
        torch._C._set_meta_in_tls_dispatch_include(True)
        try:
            torch.ops.aten.set_.source_Storage_storage_offset(tensor, tensor.untyped_storage(),
                                                              host.storage_offset(), host.shape, host.stride())
        finally:
            torch._C._set_meta_in_tls_dispatch_include(False)


def _record_stream(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Nothing to keep alive: the host data outlives every emulated stream."""
    return None


def _is_pinned(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    tensor = args[0]
    return isinstance(tensor, ShadowTensor) and tensor.device.type == "cpu"


def _pin_memory(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ShadowTensor:
    tensor = args[0]
    if isinstance(tensor, ShadowTensor) and tensor.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{tensor.type()}' only dense CPU tensors can be pinned")
    host = tensor.host if isinstance(tensor, ShadowTensor) else tensor
    return ShadowTensor(host.clone(), HOST)


def _sdp_choice(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """The attention kernel a GPU would pick has no host kernel: take the math path (plain aten ops)."""
    return _MATH_ATTENTION


def _use_cudnn_ctc_loss(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a CUDA build takes cuDNN's CTC kernel here (synchunt.shadow.cudnn): read on the host data, as the
    GPU run's own choice reads lengths already on the host."""
    names = [argument.name for argument in func._schema.arguments]
    bound = dict(zip(names, args, strict=False)) | kwargs
    lengths = [bound["input_lengths"], bound["target_lengths"]]
    read = _host(lambda: [_host_lengths(value) for value in lengths])
    return cudnn.use_cudnn_ctc_loss(bound["log_probs"], bound["targets"], read[0], read[1], int(bound["blank"]))


def _use_miopen_ctc_loss(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """MIOpen's CTC choice: the shadow device stands for a CUDA machine, which has no MIOpen."""
    return False


def _host_lengths(value: Any) -> list[int]:
    return cudnn.read_lengths(value.host if isinstance(value, ShadowTensor) else value)


_SPECIAL: dict[str, Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]] = {  # by packet (ops.SPECIAL_PACKETS)
    "record_stream": _record_stream,
    "is_pinned": _is_pinned,
    "_pin_memory": _pin_memory,
    "_fused_sdp_choice": _sdp_choice,
    "_use_cudnn_ctc_loss": _use_cudnn_ctc_loss,
    "_use_miopen_ctc_loss": _use_miopen_ctc_loss,
}


def fallback(func: torch._ops.OpOverload, *args: Any, **kwargs: Any) -> Any:
    """The CUDA backend fallback: an op that reached the CUDA key without a shadow tensor (a factory)."""
    return run(func, args, kwargs)


ShadowTensor.dispatch = staticmethod(run)  # bound here: tensor.py cannot import this module (it imports tensor)
