"""The fallback route: a ``TorchDispatchMode`` on each guarded thread that sees every aten call.

It needs no registration, so it works where kernels cannot be registered, but it costs one C++ → Python
round trip per op and sits below autograd: in eager and ``no_grad`` code composites arrive decomposed
(``aten::_local_scalar_dense`` for ``.item()``), in ``inference_mode`` whole. Chosen with
``SYNCHUNT_GUARD_ROUTE=mode`` or when the kernel route cannot be installed.
"""

from __future__ import annotations

from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

from synchunt.guard import scope
from synchunt.guard.call import OpCall, describe_call, is_latent
from synchunt.guard.classify import classify
from synchunt.guard.frames import capture_stack
from synchunt.guard.kernels import Table
from synchunt.guard.reporting import op_name, run_and_report


class GuardMode(TorchDispatchMode):
    """Classifies each aten call of its thread against the catalogue's guard ops."""

    def __init__(self, table: Table) -> None:
        super().__init__()
        self._table = table

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        entries = self._table.get(func)
        if not entries:  # the hot path: most ops are not in the catalogue
            return func(*args, **kwargs) if kwargs else func(*args)
        kwargs = kwargs or {}
        active = scope.active_entries()
        if not active or scope.FLAGS.suppress:
            return func(*args, **kwargs)
        call = OpCall(func, args, kwargs)
        code = classify(call, entries)
        if code is None:
            return func(*args, **kwargs)
        detail, latent, raw = describe_call(call), is_latent(call), capture_stack()
        return run_and_report(active, lambda: func(*args, **kwargs), code, op_name(func), latent=latent,
                              detail=detail, source="dispatch", raw=raw)


class ModeRoute:
    name = "mode"

    def __init__(self, table: Table) -> None:
        self._table = table

    def install(self) -> None:
        """Nothing process-wide: the mode stack is per thread."""

    def uninstall(self) -> None:
        """Nothing process-wide."""

    def arm(self) -> GuardMode:
        mode = GuardMode(self._table)
        mode.__enter__()
        return mode

    @staticmethod
    def disarm(token: object) -> None:
        if isinstance(token, GuardMode):
            token.__exit__(None, None, None)

    @staticmethod
    def still_armed() -> bool:
        return True  # a dispatch mode stays on its thread's mode stack
