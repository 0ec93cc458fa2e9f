"""An independent sync recorder: which ops of a CPU run would make the host wait for a CUDA device, and where.

This is the measuring instrument of the real-client benchmark, so it shares nothing with synchunt: its own list of
syncing ops (written from PyTorch's documentation of ``torch.cuda.set_sync_debug_mode``, the CUDA semantics notes
and ATen's sources: see README.md), its own frame walk, its own host-read patches. It never imports synchunt.

Two layers see the syncs:

- a ``TorchDispatchMode`` sees every ATen op that reaches the Python dispatch key (after autograd and the
  composite decompositions): ``aten::_local_scalar_dense`` under ``.item()``/``bool()``/``int()``/``float()``,
  ``aten::nonzero``, ``aten::index`` with a boolean index, ``aten::_unique2`` … and the library ops registered
  through the dispatcher (``torchvision::nms``);
- Python-level patches see the host reads that dispatch nothing on a CPU tensor: ``Tensor.tolist()``,
  ``Tensor.numpy()``, ``Tensor.cpu()`` and ``Tensor.to("cpu")`` (no-ops that return the tensor itself on CPU;
  device-to-host copies on a GPU).

Each record names (a) the *site*: the innermost frame outside torch (a library's or the user's file, at the exact
line being run) and (b) the *via*: the innermost frame in the user's target file. Each record also says whether
every tensor it reads was host memory by design (the result of an explicit ``.cpu()``/``.to("cpu")``, or derived
only from such tensors): on a GPU such a read does not wait for the device.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_THIS_FILE = os.path.abspath(__file__)
# The instrument's own files (this one and the device-branch emulations beside it) are never a site.
_OWN_FILES = {_THIS_FILE, os.path.join(os.path.dirname(_THIS_FILE), "cuda_branches.py")}


@dataclass(frozen=True)
class Frame:
    file: str  # as Python has it (absolute for imported files)
    line: int
    function: str


@dataclass(frozen=True)
class SyncEvent:
    """One would-be sync: what (``kind``, ``op``), where (``site``, ``via``), and whether it reads host memory only."""

    kind: str
    op: str
    site: Frame | None
    via: Frame | None
    host_operands: bool
    detail: str = ""


# --- which ops sync ---------------------------------------------------------------------------------------------
# An op here makes the host read device data (a count, a scalar, a result size) before it can return; on CUDA
# that is a device-to-host copy followed by a stream synchronization. Keys are ``namespace::name`` (any overload).

# Always: the output's size or the returned value is device data.
# Composite ops (item, is_nonzero, where, argwhere, allclose) are listed beside what they decompose into: which
# of the two reaches the Python dispatch key depends on the grad mode, and only the outer one is seen.
ALWAYS_SYNC = {
    "aten::_local_scalar_dense": "scalar-read",   # .item(), int(t), float(t), t.__index__()
    "aten::item": "scalar-read",
    "aten::is_nonzero": "truthiness",             # bool(t), if t:, Python max(a, b) of tensors
    "aten::nonzero": "nonzero",                    # torch.nonzero, argwhere, one-argument torch.where
    "aten::nonzero_numpy": "nonzero",
    "aten::argwhere": "nonzero",
    "aten::allclose": "value-comparison",
    "aten::masked_select": "masked-select",
    "aten::_unique": "unique",
    "aten::_unique2": "unique",
    "aten::unique_dim": "unique",
    "aten::unique_consecutive": "unique",
    "aten::unique_dim_consecutive": "unique",
    "aten::bincount": "bincount",                  # reads min/max to size its output, even with minlength
    "aten::equal": "value-comparison",             # returns a Python bool computed on the device
    "aten::_linalg_check_errors": "linalg-check",  # inverse/cholesky/solve: info read on the host
    # Library kernels that read device data on the host inside their CUDA implementation (see README.md).
    "torchvision::nms": "library-nms",
}

_BOOL_DTYPES = (torch.bool, torch.uint8)
# multinomial's fast path checks its probabilities with aten::_assert_async (seen in 2.13 and 2.14 traces; 2.5 is
# where PyTorch's history puts the change): an asynchronous device assert on CUDA, no sync. On CPU _assert_async
# reads the flag with .item(), so a CPU trace shows two aten::_local_scalar_dense under aten::multinomial that a
# GPU run does not have (README.md).
_OLD_MULTINOMIAL = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 5)


def _is_mask(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in _BOOL_DTYPES


def _conditional_kind(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, detail) for the ops that sync only with some arguments; None when this call does not."""
    if name == "aten::where":  # one-argument torch.where(cond) is nonzero
        if len(args) + len(kwargs) == 1:
            return "nonzero", "one-argument where"
    elif name == "aten::index":  # x[mask]: the mask becomes indices through nonzero inside the kernel
        indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
        if any(_is_mask(i) for i in indices if i is not None):
            return "mask-index", "boolean index"
    elif name in ("aten::index_put_", "aten::index_put", "aten::_index_put_impl_"):
        indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
        values = args[2] if len(args) > 2 else kwargs.get("values")
        accumulate = args[3] if len(args) > 3 else kwargs.get("accumulate", False)
        masks = [i for i in indices if i is not None and _is_mask(i)]
        if masks:
            # ATen's masked_fill fast path (one mask, a one-element value on the CPU, no accumulate) reads no count
            fast = (len(indices) == 1 and not accumulate and isinstance(values, torch.Tensor)
                    and values.numel() == 1 and values.device.type == "cpu")
            if not fast:
                return "mask-assign", "boolean index, tensor value"
    elif name == "aten::repeat_interleave":
        # repeat_interleave.Tensor(repeats) or .self_Tensor(self, repeats, dim); output_size is keyword-only
        repeats = args[0] if len(args) == 1 else (args[1] if len(args) > 1 else kwargs.get("repeats"))
        output_size = kwargs.get("output_size")
        if isinstance(repeats, torch.Tensor) and repeats.numel() > 1 and output_size is None:
            return "repeat-interleave", "tensor repeats, no output_size"
    elif name == "aten::histc":
        low = args[2] if len(args) > 2 else kwargs.get("min", 0)
        high = args[3] if len(args) > 3 else kwargs.get("max", 0)
        if low == high:
            return "histc", "min == max: the range is read from the data"
    elif name == "aten::multinomial" and _OLD_MULTINOMIAL:
        samples = args[1] if len(args) > 1 else kwargs.get("num_samples")
        replacement = args[2] if len(args) > 2 else kwargs.get("replacement", False)
        if not replacement or samples == 1:
            # Distributions.cpp before 2.5: the fast path checks the probabilities with two .item() reads
            return "multinomial-check", "validity checks read on the host"
    elif name == "aten::normal":
        std = args[1] if len(args) > 1 else kwargs.get("std")
        if isinstance(std, torch.Tensor):
            return "normal-std-check", "std checked on the host"
    return None


_SCALAR_KINDS = {"scalar-read", "truthiness"}

# How many host waits one call of an op costs on CUDA (ATen reads twice in the multinomial fast path).
WAITS_PER_CALL = {"multinomial-check": 2}


# --- where ------------------------------------------------------------------------------------------------------

def _is_torch_or_instrument(filename: str) -> bool:
    return filename.startswith(_TORCH_DIR) or filename in _OWN_FILES or filename.startswith("<frozen")


def _frames(target_file: str) -> tuple[Frame | None, Frame | None]:
    frame = sys._getframe(1)
    site = via = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if site is None and not _is_torch_or_instrument(filename):
            site = Frame(filename, frame.f_lineno, frame.f_code.co_name)
        if via is None and filename == target_file:
            via = Frame(filename, frame.f_lineno, frame.f_code.co_name)
        if site is not None and via is not None:
            break
        frame = frame.f_back
    return site, via


# --- host memory by design --------------------------------------------------------------------------------------

class _HostTensors:
    """Tensors that are host memory on a GPU too: results of ``.cpu()``/``.to("cpu")`` and what derives only from
    them. On a CPU run ``.cpu()`` returns the tensor itself, so the patched call returns a copy, as a GPU run
    would (the copy is what a device-to-host transfer makes)."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref[torch.Tensor]] = {}  # by id: a tensor's == is elementwise

    def add(self, tensor: torch.Tensor) -> None:
        self._refs[id(tensor)] = weakref.ref(tensor)

    def __contains__(self, tensor: torch.Tensor) -> bool:
        ref = self._refs.get(id(tensor))
        return ref is not None and ref() is tensor


def _tensors(tree: Any) -> list[torch.Tensor]:
    return [leaf for leaf in tree_flatten(tree)[0] if isinstance(leaf, torch.Tensor)]


# --- the recorder -----------------------------------------------------------------------------------------------

class _Mode(TorchDispatchMode):
    def __init__(self, recorder: SyncRecorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func._schema.name
        inputs = _tensors((args, kwargs))
        host = bool(inputs) and all(t in self.recorder.host for t in inputs)
        kind = ALWAYS_SYNC.get(name)
        detail = ""
        if kind is None:
            conditional = _conditional_kind(name, args, kwargs)
            if conditional is not None:
                kind, detail = conditional
        if kind is not None:
            self.recorder.record(kind, name, host, detail)
        out = func(*args, **kwargs)
        if host:
            for tensor in _tensors(out):
                self.recorder.host.add(tensor)
        return out


class SyncRecorder:
    """Record the would-be syncs of the code run inside ``with recorder:`` on this thread.

    ``target_file``: the user's file (absolute path) whose innermost frame is each record's ``via``.
    """

    def __init__(self, target_file: str) -> None:
        self.target_file = os.path.abspath(target_file)
        self.events: list[SyncEvent] = []
        self.host = _HostTensors()
        self._thread = threading.get_ident()
        self._busy = threading.local()
        self._mode: _Mode | None = None
        self._undo: list[Callable[[], None]] = []

    def record(self, kind: str, op: str, host: bool, detail: str = "") -> None:
        if threading.get_ident() != self._thread:
            return
        if kind in _SCALAR_KINDS and getattr(self._busy, "reading", None):
            kind = self._busy.reading  # the Python-level read that led here (bool(t) decomposes to a scalar read)
        site, via = _frames(self.target_file)
        for _ in range(WAITS_PER_CALL.get(kind, 1)):
            self.events.append(SyncEvent(kind, op, site, via, host, detail))

    def __enter__(self) -> SyncRecorder:
        self._patch_host_reads()
        self._mode = _Mode(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._mode is not None
        self._mode.__exit__(*exc)
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    def _patch(self, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        original = getattr(torch.Tensor, name)
        setattr(torch.Tensor, name, make(original))
        self._undo.append(lambda: setattr(torch.Tensor, name, original))

    def _patch_host_reads(self) -> None:
        recorder = self

        def reading(kind: str, op: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
            def make(original: Callable[..., Any]) -> Callable[..., Any]:
                def read(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
                    recorder.record(kind, op, tensor in recorder.host)
                    return original(tensor, *args, **kwargs)
                return read
            return make

        def moving(original: Callable[..., Any]) -> Callable[..., Any]:
            def to(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
                result = original(tensor, *args, **kwargs)
                if not isinstance(result, torch.Tensor):
                    return result
                method = f"Tensor.{original.__name__}"
                if _moves_to_cpu(original.__name__, args, kwargs):
                    recorder.record("device-to-host", method, tensor in recorder.host)
                    result = _copied(tensor, result)  # a CPU run aliases; a GPU run copies
                    recorder.host.add(result)
                elif tensor in recorder.host and tensor.numel() and _moves_to_device(args, kwargs, recorder.host):
                    recorder.record("host-to-device", method, False, "a host tensor copied to the device")
                    result = _copied(tensor, result)
                return result
            return to

        def making(name: str) -> None:
            original = getattr(torch, name)

            def make(*args: Any, **kwargs: Any) -> Any:
                result = original(*args, **kwargs)
                device = kwargs.get("device")
                if device is None or (isinstance(device, str) and device.split(":")[0] == "cpu"):
                    recorder.host.add(result)  # built from host data on the host: a CPU tensor on a GPU run too
                elif not (args and isinstance(args[0], torch.Tensor)) and result.numel():
                    # (copy_ returns before any memcpy when there is nothing to copy: an empty tensor is no sync)
                    recorder.record("host-to-device", f"torch.{name}", False, "built from host data on the device")
                return result

            setattr(torch, name, make)
            self._undo.append(lambda: setattr(torch, name, original))

        def truthiness(original: Callable[..., Any]) -> Callable[..., Any]:
            def read(tensor: torch.Tensor) -> bool:
                recorder._busy.reading = "truthiness"
                try:
                    return original(tensor)
                finally:
                    recorder._busy.reading = None
            return read

        self._patch("__bool__", truthiness)
        self._patch("tolist", reading("device-to-host", "Tensor.tolist"))
        self._patch("numpy", reading("device-to-host", "Tensor.numpy"))
        def creating(name: str) -> None:
            original = getattr(torch, name)

            def make(*args: Any, **kwargs: Any) -> Any:
                result = original(*args, **kwargs)
                device = kwargs.get("device")
                # A torch.device object may be `x.device`, the device on a GPU run: only no device or the literal
                # "cpu" names the host.
                if isinstance(result, torch.Tensor) and (
                        device is None or (isinstance(device, str) and device.split(":")[0] == "cpu")):
                    recorder.host.add(result)  # made on the host: a CPU tensor on a GPU run too
                return result

            setattr(torch, name, make)
            self._undo.append(lambda: setattr(torch, name, original))

        self._patch("cpu", moving)
        self._patch("to", moving)
        for name in ("tensor", "as_tensor", "from_numpy"):
            making(name)
        # Factories that make data where they are told (no host data to copy): on the host when no device is
        # named or the literal "cpu" is (diffusers' randn_tensor draws on "cpu" for a CPU generator, then moves).
        for name in HOST_FACTORIES:
            creating(name)


HOST_FACTORIES = ("randn", "rand", "randint", "randperm", "zeros", "ones", "empty", "full", "arange", "linspace")


def _copied(source: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    if result is not source:
        return result
    with torch.utils._python_dispatch._disable_current_modes():
        return source.clone()


def _moves_to_device(args: tuple[Any, ...], kwargs: dict[str, Any], host: _HostTensors) -> bool:
    """``.to(x.device)``, ``.to(device=d)``, ``.to(other_tensor)`` where that names the device on a GPU run."""
    target = kwargs.get("device", args[0] if args else None)
    if isinstance(target, torch.Tensor):
        return target not in host
    if isinstance(target, str):
        return target.split(":")[0] != "cpu"
    return isinstance(target, torch.device)


def _moves_to_cpu(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    if method == "cpu":
        return True
    target = kwargs.get("device", args[0] if args else None)
    # Only the literal "cpu" names the host: on a CPU run ``device=x.device`` is also the CPU, but on a GPU run it
    # is the device (no copy); ``.to(dtype)`` and ``.to(other_tensor)`` are no moves this instrument can judge.
    return isinstance(target, str) and target.split(":")[0] == "cpu"
