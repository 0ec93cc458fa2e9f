"""The guard's main route: Python kernels at the ``PreDispatch`` key for the catalogue's guard ops only.

``PreDispatch`` sits above autograd and is in no tensor's key set; a guarded thread adds it to its
thread-local include set, so only that thread reaches these kernels, and every other op has a fallthrough
kernel at the key (`synchunt.guard.fallthrough`): the dispatcher skips the key for it, as on an unguarded
thread (ATen's own fallback for the key is boxed, about 1.4 µs an op; it is what ops pay while a
pre-dispatch trace runs, when the fallthroughs are removed). Above autograd
the guard sees the op the user called in every grad mode (``t.item()`` as itself, a composite before it
decomposes), and autograd still records it, since the kernel
re-enters the dispatcher below ``PreDispatch`` instead of below autograd. An op runs with ``PreDispatch``
excluded, so what it calls inside (a CPU kernel's own host reads) is not reported again; ops the catalogue
does not list keep their internals visible, which is how a composite's inner sync is still found.

The copies (``aten::copy_``, ``aten::_to_copy``: every slice assignment, dtype conversion and wrapped scalar
dispatches one) are classified only by predicates that need a device end (:data:`predicates.CROSSING`). A
process that can hold no device tensor has their kernels left out, so they pay the C++ fallback like any other
op; where a device can exist (an accelerator, a CUDA build, the shadow device) their kernels are registered and
look at the call's devices before anything else.

Higher-order operators (``torch.cond``, flex attention) dispatch in Python and have no kernel for the key:
while a guard is installed they run with the key excluded (their inner ops are not checked).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch._ops import HigherOrderOperator

from synchunt.errors import UsageError
from synchunt.guard import scope
from synchunt.guard.call import HOST_DEVICE_TYPES, OpCall, describe_call, is_latent, schema_slots
from synchunt.guard.classify import Predicate, classify
from synchunt.guard.fallthrough import FALLTHROUGHS
from synchunt.guard.frames import capture_stack
from synchunt.guard.predicates import CROSSING
from synchunt.guard.reporting import op_name, run_and_report
from synchunt.shadow import device as shadow_device
from synchunt.shadow import native as shadow_native
from synchunt.shadow import state as shadow_state
from synchunt.shadow.tensor import ShadowTensor

KEY = torch._C.DispatchKey.PreDispatch
_is_excluded = torch._C._dispatch_tls_is_dispatch_key_excluded
_set_excluded = torch._C._dispatch_tls_set_dispatch_key_excluded
_is_included = torch._C._dispatch_tls_is_dispatch_key_included
_set_included = torch._C._dispatch_tls_set_dispatch_key_included
_PYTHON_KEY = torch._C.DispatchKey.Python

Table = Mapping[torch._ops.OpOverload, tuple[tuple[str, Predicate], ...]]


def _below(op: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``op`` with ``PreDispatch`` excluded on this thread: nothing it calls reaches the guard."""
    previous = _is_excluded(KEY)
    _set_excluded(KEY, True)
    try:
        return op(*args, **kwargs)
    finally:
        _set_excluded(KEY, previous)


def _has_python_key(call: OpCall) -> bool:
    """Fake, functional and other Python tensor subclasses: their real ops, if any, come through again. Not the
    shadow device's tensors: the op seen here, on the device tensors the user holds, is the one to classify."""
    return any(torch._C._dispatch_keys(tensor).has(_PYTHON_KEY) and not isinstance(tensor, ShadowTensor)
               for tensor in call.tensors())


def _touches_device(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """A tensor argument on a device, or a ``device`` argument naming one: what a crossing predicate needs."""
    for value in args:
        if isinstance(value, torch.Tensor) and value.device.type not in HOST_DEVICE_TYPES:
            return True
    target = kwargs.get("device") if kwargs else None
    return target is not None and torch.device(target).type not in HOST_DEVICE_TYPES


def devices_possible() -> bool:
    """Whether this process can hold a tensor on a device: an accelerator torch knows (CUDA, XPU, MPS, MTIA, HPU,
    a PrivateUse1 backend), a CUDA build, or the shadow device (active, or entered before: its tensors outlive
    it, and the CUDA device guard it registers stays)."""
    if shadow_state.is_active() or torch.accelerator.is_available():
        return True
    try:
        return shadow_native.has_cuda_guard()
    except UsageError:  # a build that does not expose its device guard registry: a device may exist
        return True


def crossing_only(entries: tuple[tuple[str, Predicate], ...]) -> bool:
    """Every rule of the op needs a device end: the op cannot sync where no tensor is on a device."""
    return bool(entries) and all(predicate in CROSSING for _, predicate in entries)


def make_kernel(func: torch._ops.OpOverload, entries: tuple[tuple[str, Predicate], ...],
                idle: Callable[[], None]) -> Callable[..., Any]:
    """The ``PreDispatch`` kernel of one overload; ``entries`` empty means a reviewed op that never syncs."""

    slots = schema_slots(func)
    op = func._op  # the C++ entry point, without OpOverload.__call__'s Python frame
    crossing = crossing_only(entries)

    def kernel(keyset: torch._C.DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        if crossing and not _touches_device(args, kwargs):  # a host-to-host copy: nothing to classify
            idle()
            return _below(op, args, kwargs)
        active = scope.active_entries()
        if not active:
            idle()
            return _below(op, args, kwargs)
        if scope.FLAGS.suppress or not entries:
            return _below(op, args, kwargs)
        call = OpCall(func, args, kwargs, slots)
        code = classify(call, entries)
        if code is None:
            return _below(op, args, kwargs)
        if _has_python_key(call):
            return func.redispatch(keyset.remove(KEY), *args, **kwargs)
        # Capture before running: the op may free its inputs; describe them while they are intact.
        detail, latent, raw = describe_call(call), is_latent(call), capture_stack()
        return run_and_report(active, lambda: _below(op, args, kwargs), code, op_name(func), latent=latent,
                              detail=detail, source="dispatch", raw=raw)

    kernel.__name__ = kernel.__qualname__ = f"synchunt_guard_{func.__name__}"
    return kernel


class KernelRoute:
    """Registers the kernels once per process and arms threads.

    Registering them costs about half a millisecond, so they stay registered after the last guard exits: on a
    thread that does not include ``PreDispatch`` the dispatcher never reaches them, and on one that does
    without an active guard (torch.export's pre-dispatch tracing) they run the op unchanged. Only the
    higher-order-operator patch (and, in a process without a device, the shadow device's entry) follows the
    guards in and out. :meth:`remove_kernels` unregisters them.

    The kernels of the copies (:func:`crossing_only` ops) are registered with the others where a device can
    exist (:func:`devices_possible`), else once one can: at a later guard's entry, or when the shadow device is
    entered inside a guard.
    """

    name = "kernels"

    def __init__(self, table: Table, reviewed: tuple[torch._ops.OpOverload, ...], idle: Callable[[], None]):
        self._table, self._reviewed, self._idle = table, reviewed, idle
        self._library: list[torch.library.Library] | None = None
        self._crossing: list[torch.library.Library] | None = None  # the copies' kernels, once a device can exist
        self._fallthroughs = FALLTHROUGHS  # every other op: no cost on a guarded thread
        self._hop_patch = _ClassPatch(HigherOrderOperator, "__call__", _hop_call)
        self._shadow_hook = _ClassPatch(shadow_device.ShadowDevice, "__enter__", _shadow_enter(self.devices_ready))
        self._patched: list[_ClassPatch] = []  # the class patches applied while guards are installed
        self._lock = threading.Lock()

    @property
    def registered(self) -> bool:
        return self._library is not None

    @property
    def copies_registered(self) -> bool:
        """Whether the copies' kernels are registered (only where a device tensor can exist)."""
        return self._crossing is not None

    def install(self) -> None:
        if self._library is None:
            with self._lock:
                if self._library is None:
                    self._library = self._register({f: e for f, e in self._kernels().items()
                                                    if not crossing_only(e)})
        if not self._fallthroughs.registered:  # first guard, or a pre-dispatch trace removed them since
            self._fallthroughs.register()
        if not self._patched:
            self._patched = [self._hop_patch] if self.devices_ready() else [self._hop_patch, self._shadow_hook]
            for patch in self._patched:
                patch.apply()

    def devices_ready(self) -> bool:
        """Register the copies' kernels if a device tensor can exist now; whether they are registered."""
        if self._crossing is not None:
            return True
        with self._lock:
            if self._crossing is None and self._library is not None and devices_possible():
                self._crossing = self._register({f: e for f, e in self._kernels().items() if crossing_only(e)})
            return self._crossing is not None

    def uninstall(self) -> None:
        patched, self._patched = self._patched, []
        for patch in reversed(patched):
            patch.undo()

    def remove_kernels(self) -> None:
        self._fallthroughs.remove()
        with self._lock:
            for libraries in (self._library, self._crossing):
                for library in libraries or ():
                    library._destroy()
            self._library = self._crossing = None

    def _register(self, kernels: Mapping[torch._ops.OpOverload, tuple[tuple[str, Predicate], ...]],
                  ) -> list[torch.library.Library]:
        libraries: dict[str, torch.library.Library] = {}  # one per namespace: aten, and a library's (torchvision)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "overriding a previously registered kernel"
                for func, entries in kernels.items():
                    namespace, _, name = func._schema.name.partition("::")
                    library = libraries.get(namespace)
                    if library is None:
                        library = libraries[namespace] = torch.library.Library(namespace, "IMPL")
                    overload = func._overloadname
                    name += "" if overload == "default" else f".{overload}"
                    library.impl(name, make_kernel(func, entries, self._idle), "PreDispatch", with_keyset=True)
        except BaseException:
            for library in libraries.values():
                library._destroy()
            raise
        return list(libraries.values())

    def _kernels(self) -> dict[torch._ops.OpOverload, tuple[tuple[str, Predicate], ...]]:
        kernels = {func: () for func in self._reviewed}
        kernels.update(self._table)
        return kernels

    @staticmethod
    def arm() -> bool:
        """Include the key on the calling thread; the token is whether it was included before."""
        before = _is_included(KEY)
        _set_included(KEY, True)
        return before

    @staticmethod
    def disarm(token: object) -> None:
        _set_included(KEY, bool(token))

    @staticmethod
    def still_armed() -> bool:
        """Whether the calling thread still includes the key (a pre-dispatch trace clears it when it ends)."""
        return _is_included(KEY)


class _ClassPatch:
    """``owner.name`` replaced by a wrapper of what it holds, and put back; the wrapper is made once per original."""

    def __init__(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        self.owner, self.name, self.make = owner, name, make
        self.original: Any = None
        self.wrapper: Any = None

    def apply(self) -> None:
        original = self.owner.__dict__[self.name]
        if original is not self.original:
            self.original, self.wrapper = original, self.make(original)
        setattr(self.owner, self.name, self.wrapper)

    def undo(self) -> None:
        setattr(self.owner, self.name, self.original)


def _hop_call(original: Callable[..., Any]) -> Callable[..., Any]:
    """Higher-order operators run with ``PreDispatch`` excluded on guarded threads (they have no kernel)."""
    def __call__(hop: Any, *args: Any, **kwargs: Any) -> Any:
        if not scope.active_entries():
            return original(hop, *args, **kwargs)
        flags, excluded = scope.FLAGS, _is_excluded(KEY)
        flags.suppress += 1  # what runs inside (a compile, its fake tensors) is not the user's op
        _set_excluded(KEY, True)
        try:
            return original(hop, *args, **kwargs)
        finally:
            _set_excluded(KEY, excluded)
            flags.suppress -= 1

    return __call__


def _shadow_enter(ready: Callable[[], bool]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """While guards are installed in a process without a device, entering the shadow device registers the copies'
    kernels (its device tensors make copies that cross), so a shadow device entered inside a guard is followed."""
    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def __enter__(device: Any) -> Any:
            entered = original(device)
            ready()
            return entered

        return __enter__

    return make
