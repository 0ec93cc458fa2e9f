"""Fallthrough kernels at ``PreDispatch`` for every op the guard has no kernel for: such an op costs nothing.

ATen's fallback for ``PreDispatch`` is boxed: on a guarded thread, an op the catalogue does not list still pays a
boxed redispatch (about 1.4 µs; a decode step of small ops ran a third slower for it alone). A fallthrough kernel
for the op makes the dispatcher leave the key out of that op's dispatch outright, as if the thread did not
include it; what runs is the same (the fallback only redispatches below the key).

Torch keeps that fallback a real kernel so that the Python dispatcher can interpose pre-dispatch tracing
(``torch.export``'s training IR, ``make_fx(pre_dispatch=True)``) on every op: a fallthrough would hide the op from
the trace. So the fallthroughs are never registered while a pre-dispatch mode is set, and once registered
``torch._ops._set_mode_pre_dispatch`` (where every such mode is set) is wrapped to remove them first; the next
guard to enter registers them again. A torch without that function gets no fallthroughs (the boxed
fallback, as before). Ops registered after the fallthroughs (a library imported later) pay the fallback.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import torch

_KEY = "PreDispatch"
_SET_MODE = "_set_mode_pre_dispatch"


def pre_dispatch_tracing() -> bool:
    """Whether a pre-dispatch mode (an export or ``make_fx(pre_dispatch=True)`` trace) is set."""
    count = getattr(torch._ops, "_len_torch_dispatch_stack_pre_dispatch", None)
    return bool(count is not None and count())


class Fallthroughs:
    """The fallthrough kernels of the kernel route (one set per process: `FALLTHROUGHS`), and the hook on torch's
    pre-dispatch modes that removes them before a trace."""

    def __init__(self) -> None:
        self._libraries: list[torch.library.Library] = []
        self._original: Callable[..., Any] | None = None  # torch's _set_mode_pre_dispatch, while hooked
        self._lock = threading.RLock()

    @property
    def registered(self) -> bool:
        return bool(self._libraries)

    def register(self) -> int:
        """A fallthrough for every op with no kernel at ``PreDispatch`` now (the guard's own kernels are
        registered first, so they are kept); how many. None while a pre-dispatch trace runs, or on a torch
        whose pre-dispatch modes cannot be followed."""
        with self._lock:
            if self._libraries or not self._hook() or pre_dispatch_tracing():
                return 0
            libraries: dict[str, torch.library.Library] = {}
            count = 0
            has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                for qualified in torch._C._dispatch_get_all_op_names():
                    namespace, _, name = qualified.partition("::")
                    try:
                        if has_kernel(qualified, _KEY):  # the guard's kernel, or one torch registered
                            continue
                        library = libraries.get(namespace)
                        if library is None:
                            library = libraries[namespace] = torch.library.Library(namespace, "IMPL")
                        library.impl(name, torch.library.fallthrough_kernel, _KEY)
                        count += 1
                    except (RuntimeError, ValueError):  # an op that takes no kernel: it keeps the fallback
                        continue
            self._libraries = list(libraries.values())
            return count

    def remove(self) -> None:
        """The fallthroughs unregistered and torch's function put back."""
        with self._lock:
            self._drop()
            if self._original is not None:
                setattr(torch._ops, _SET_MODE, self._original)
                self._original = None

    def _drop(self) -> None:
        with self._lock:
            libraries, self._libraries = self._libraries, []
            for library in libraries:
                library._destroy()

    def _hook(self) -> bool:
        """Wrap torch's function that sets pre-dispatch modes (once); False when torch has none."""
        if self._original is not None:
            return True
        original = getattr(torch._ops, _SET_MODE, None)
        if original is None:
            return False
        self._original = original

        def _set_mode_pre_dispatch(mode: Any) -> Any:
            self._drop()  # the trace must see every op at the key
            return original(mode)

        _set_mode_pre_dispatch.__wrapped__ = original  # type: ignore[attr-defined]
        setattr(torch._ops, _SET_MODE, _set_mode_pre_dispatch)
        return True


FALLTHROUGHS = Fallthroughs()
