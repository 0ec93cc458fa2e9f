"""The shadow tensor: a tensor that says it lives on the accelerator (or in pinned host memory) while its data
sits in ordinary host memory.

It is a wrapper subclass (``torch.Tensor._make_wrapper_subclass``) with ``device=cuda:N``, so ``t.device``,
``t.is_cuda``, ``t.get_device()`` and every ``device.type == "cuda"`` branch in library code answer as on a GPU,
and autograd and autocast treat it as a CUDA tensor. Each aten op on it reaches
``__torch_dispatch__``, which runs the op on the host data (:func:`synchunt.shadow.dispatch.run`). A pinned
host buffer is the same wrapper with ``device=cpu``: only ``is_pinned()`` tells it from a plain host tensor.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from synchunt.shadow import state
from synchunt.shadow.notes import NoteKind, note

HOST = torch.device("cpu")


class ShadowTensor(torch.Tensor):
    """A device-resident (or pinned host) tensor of the shadow device; ``host`` holds its data."""

    host: torch.Tensor

    @staticmethod
    def __new__(cls, host: torch.Tensor, device: torch.device) -> ShadowTensor:
        if torch.is_inference_mode_enabled():
            # Under inference mode a new wrapper would be an inference tensor, and the dispatcher then fails to
            # share a view's version counter with its (normal) base: `for t in timesteps` inside
            # `torch.inference_mode()`. The wrapper only says where the data is; its host data keeps the mode.
            with torch.inference_mode(False):
                return cls._wrap(host, device)
        return cls._wrap(host, device)

    @classmethod
    def _wrap(cls, host: torch.Tensor, device: torch.device) -> ShadowTensor:
        wrapper = torch.Tensor._make_wrapper_subclass(
            cls, host.size(), strides=host.stride(), storage_offset=host.storage_offset(), dtype=host.dtype,
            layout=host.layout, device=device, requires_grad=False)
        wrapper.host = host
        if device.type != "cpu":  # a pinned host buffer is no sign that the code uses the device
            state.STATE.device_tensors += 1
        return wrapper

    __torch_function__ = torch._C._disabled_torch_function_impl

    dispatch: Any  # synchunt.shadow.dispatch.run, set when that module loads

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        return cls.dispatch(func, args, kwargs or {})

    def data_ptr(self) -> int:
        """The host data's address: code that hands it to C (ctypes, an extension, Triton) is not followed."""
        if self.device.type != "cpu":
            note(NoteKind.DATA_POINTER, "Tensor.data_ptr",
                 "a device tensor's address was taken; what native code does with it is not followed (the "
                 "address given is its host copy's)")
        return self.host.data_ptr()

    # torch refuses tensor subclasses in these C entry points; each reads device data on the host (a sync),
    # reported as the call it is.
    def tolist(self) -> Any:
        return state.reported("torch.Tensor.tolist", self, lambda: self.host.tolist())

    def numpy(self, *, force: bool = False) -> Any:
        if self.device.type == "cpu":
            return self.host.numpy(force=force)

        def refuse() -> Any:
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy "
                                "the tensor to host memory first.")
            return self.host.numpy(force=True)

        return state.reported("torch.Tensor.numpy", self, refuse)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        if self.device.type != "cpu":
            note(NoteKind.DATA_POINTER, "Tensor.__dlpack__", "a device tensor left through DLPack; the consumer "
                 "gets its host copy, and what it does with it is not followed")
        return self.host.__dlpack__(*args, **kwargs)

    def __deepcopy__(self, memo: dict[int, Any]) -> ShadowTensor:
        known = memo.get(id(self))
        if known is not None:
            return known
        copied = ShadowTensor(copy.deepcopy(self.host, memo), self.device)
        memo[id(self)] = copied
        if self.requires_grad:
            copied.requires_grad_()
        if self.grad is not None:
            copied.grad = copy.deepcopy(self.grad, memo)
        for name, value in self.__dict__.items():  # a parameter's marker, attributes the code set
            if name != "host":
                setattr(copied, name, copy.deepcopy(value, memo))
        return copied

    def __reduce_ex__(self, protocol: Any) -> Any:
        if self.device.type == "cpu":
            return self.host.__reduce_ex__(protocol)
        note(NoteKind.NOT_EMULATED, "torch.save", "saving a device tensor (its storage is not device memory)")
        raise RuntimeError("shadow device: saving or pickling a device tensor is not emulated; save its .cpu() copy")

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        text = torch._tensor_str._str(self, tensor_contents=tensor_contents)  # reads the data: a sync, as on a GPU
        prefix = type(self).__name__ + "("
        return "tensor(" + text[len(prefix):] if text.startswith(prefix) else text

    def __format__(self, format_spec: str) -> str:
        # torch formats only plain 0-dim tensors by value (reading it: a sync on a GPU, as here)
        if self.dim() == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)


def is_shadow(tensor: torch.Tensor) -> bool:
    return isinstance(tensor, ShadowTensor)
