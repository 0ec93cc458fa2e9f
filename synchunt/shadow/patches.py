"""Putting the one-GPU answers in place.

``torch.cuda``/``torch.accelerator`` functions are replaced once per process by dormant wrappers that answer
for the shadow device while it is active and call the original otherwise: the runtime guard wraps some of the
same attributes (``torch.cuda.synchronize``) and restores what it found, so a wrapper that stays is the one
order of entering and leaving that cannot go wrong. Classes (``Stream``, ``Event``, ``CUDAGraph``) and the
pinned-memory entry points are swapped in while a shadow device is active only (a factory is too hot a
function to leave wrapped), as is the autograd entry point that turns the engine's refusal of device tensors
without a GPU into one clear error.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

import torch

from synchunt.shadow import cuda_api, cudnn, state
from synchunt.shadow.notes import NoteKind, note
from synchunt.shadow.tensor import HOST, ShadowTensor

_CLASSES = ("Stream", "Event", "CUDAGraph")
# torch functions that take ``pin_memory=``: a CPU-only build has no pinned allocator.
_PINNING_FACTORIES = ("empty", "zeros", "ones", "full", "empty_strided", "tensor", "arange", "rand", "randn",
                      "randint", "randperm", "empty_like", "zeros_like", "ones_like", "full_like", "eye",
                      "linspace", "logspace")


def _dormant(original: Callable[..., Any], shadow: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def answer(*args: Any, **kwargs: Any) -> Any:
        return shadow(*args, **kwargs) if state.is_active() else original(*args, **kwargs)

    answer.__synchunt_shadow__ = True  # type: ignore[attr-defined]
    return answer


_DORMANT_INSTALLED = False


def install_dormant() -> None:
    """The dormant ``torch.cuda``/``torch.accelerator`` wrappers (once per process)."""
    global _DORMANT_INSTALLED
    if _DORMANT_INSTALLED:
        return
    for module, answers in ((torch.cuda, cuda_api.CUDA), (torch.cuda.nvtx, cuda_api.NVTX),
                            (getattr(torch, "accelerator", None), cuda_api.ACCELERATOR)):
        if module is None:
            continue
        for name, shadow in answers.items():
            if name in _CLASSES:
                continue
            original = getattr(module, name, None)
            if original is None or getattr(original, "__synchunt_shadow__", False):
                continue
            setattr(module, name, _dormant(original, shadow))
    _DORMANT_INSTALLED = True


def _pinning(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def factory(*args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("pin_memory"):
            return original(*args, **kwargs)
        device = kwargs.get("device")
        if device is not None and torch.device(device).type != "cpu":
            return original(*args, **kwargs)  # torch's own error: only host memory is pinned
        kwargs["pin_memory"] = False
        made = original(*args, **kwargs)
        return _pinned(made)

    return factory


def _pinned(tensor: torch.Tensor) -> ShadowTensor:
    pinned = ShadowTensor(tensor.detach(), HOST)
    return pinned.requires_grad_() if tensor.requires_grad else pinned


def _pin_memory(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def pin_memory(self: torch.Tensor, device: Any = None) -> torch.Tensor:
        if isinstance(self, ShadowTensor):
            return original(self) if device is None else original(self, device)
        return _pinned(self.detach().clone())

    return pin_memory


# How autograd's engine refuses device tensors without a GPU: a CPU-only build has no accelerator for their
# streams; a CUDA build asks the driver for the device's primary context.
_ENGINE_REFUSALS = ("accelerator device when none is available", "hasPrimaryContext expects a valid device index")


def _backward(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def run_backward(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        except RuntimeError as error:
            if not any(refusal in str(error) for refusal in _ENGINE_REFUSALS):
                raise
            note(NoteKind.NOT_EMULATED, "torch.autograd.backward",
                 "the backward pass of device tensors: torch's autograd engine needs a real accelerator for "
                 "their streams")
            raise RuntimeError("shadow device: the backward pass of device tensors cannot run without a GPU "
                               "(autograd's stream handling needs a real accelerator); check the forward "
                               "under the shadow device and the training step on the CPU") from None

    return run_backward


def _load(original: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.load(f, map_location="cuda")``: storages cannot live on the shadow device, so the file is read into
    host memory and its tensors are then moved, each a blocking host-to-device copy as ``storage.cuda()`` is."""
    @functools.wraps(original)
    def load(f: Any, map_location: Any = None, *args: Any, **kwargs: Any) -> Any:
        target = _device_of(map_location)
        if target is None or target.type != "cuda":
            return original(f, map_location, *args, **kwargs)
        return _moved(original(f, "cpu", *args, **kwargs), target)

    return load


def _device_of(location: Any) -> torch.device | None:
    if isinstance(location, torch.device):
        return location
    if isinstance(location, str):
        try:
            return torch.device(location)
        except RuntimeError:
            return None
    return None  # a dict or a callable is torch's to apply (a storage cannot be moved to the shadow device)


def _moved(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        moved = {key: _moved(item, device) for key, item in value.items()}
        if type(value) is not dict:  # an OrderedDict state dict, with its _metadata
            copy = type(value)(moved)
            copy.__dict__.update(getattr(value, "__dict__", {}))
            return copy
        return moved
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_moved(item, device) for item in value)
    return value


def _shallow_copy_type(original: Callable[..., Any]) -> Callable[..., Any]:
    """``nn.Module.to()`` moves a parameter in place (``param.data = moved``) when torch says the two tensors can
    share an implementation; a shadow tensor's data is its own attribute, so it gets a new parameter instead (as a
    module moved to an XLA device does). Its other route, ``swap_tensors``, fails under the profiler."""
    @functools.wraps(original)
    def compatible(tensor: torch.Tensor, other: torch.Tensor) -> bool:
        if isinstance(tensor, ShadowTensor) or isinstance(other, ShadowTensor):
            return False
        return original(tensor, other)

    return compatible


# torch's cached snapshots of its own namespace: the first call fills each cache for the life of the process. Filled
# while the factories are swapped, ``torch.utils._device``'s set would hold the wrappers, not torch's functions: a
# ``with torch.device("meta")`` block (transformers builds every model in one) would then leave factories on the
# CPU even after the shadow device exits, and transformers' loading would keep uninitialized buffers.
_NAMESPACE_SNAPSHOTS = (("torch.utils._device", "_device_constructors"),
                        ("torch.overrides", "get_ignored_functions"),
                        ("torch.overrides", "get_testing_overrides"),
                        ("torch.overrides", "_get_overridable_functions"),
                        ("torch.overrides", "_get_tensor_methods"))


def _fill_namespace_snapshots() -> None:
    """Fill torch's cached snapshots of its namespace with torch's own functions, before any is swapped."""
    for module_name, name in _NAMESPACE_SNAPSHOTS:
        module = importlib.import_module(module_name)
        snapshot = getattr(module, name, None)
        if callable(snapshot):
            snapshot()


class Swapped:
    """The attributes swapped in while a shadow device is active; ``undo`` puts back what was there."""

    def __init__(self) -> None:
        _fill_namespace_snapshots()
        self._saved: list[tuple[Any, str, Any]] = []
        for name in _CLASSES:
            self._set(torch.cuda, name, cuda_api.CUDA[name])
        self._set(torch, "Generator", cuda_api.ShadowGenerator)
        for name in _PINNING_FACTORIES:
            original = getattr(torch, name, None)
            if original is not None:
                self._set(torch, name, _pinning(original))
        self._set(torch.Tensor, "pin_memory", _pin_memory(torch.Tensor.pin_memory))
        self._set(torch.autograd, "_engine_run_backward", _backward(torch.autograd._engine_run_backward))
        self._set(torch, "load", _load(torch.load))
        compatible = torch._has_compatible_shallow_copy_type
        self._set(torch, "_has_compatible_shallow_copy_type", _shallow_copy_type(compatible))
        # cuDNN's RNN kernel cannot run on the host: RNNs take torch's native path (synchunt.shadow.cudnn)
        for name in cudnn.RNN_FUNCTIONS:
            self._set(torch._VF, name, cudnn.without_cudnn(getattr(torch._VF, name)))
        self._set(torch, "ctc_loss", cudnn.host_lengths_as_lists(torch.ctc_loss))
        rnn = torch.nn.modules.rnn.RNNBase
        self._set(rnn, "flatten_parameters", cudnn.without_cudnn(rnn.flatten_parameters))

    def _set(self, owner: Any, name: str, value: Any) -> None:
        self._saved.append((owner, name, owner.__dict__.get(name, _MISSING)))
        setattr(owner, name, value)

    def undo(self) -> None:
        for owner, name, saved in reversed(self._saved):
            if saved is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, saved)
        self._saved = []


_MISSING = object()
