"""Reviewed aten ops that are not host syncs on a GPU, each with its reason and where that is stated.

Two kinds of op need an entry. Ops tagged ``dynamic_output_shape`` or ``data_dependent_output`` that map to
no rule (the registry meta-test requires a rule or an entry here for every such op). And ops whose CPU kernel
reads a value on the host where the CUDA kernel does not: the runtime guard runs them as one opaque call, so
a CPU run does not report those reads as latent syncs. ``NOT_HOST_SYNC_CALLS`` does the same for Python
functions of torch that read a tensor which lives in host memory by design. Standard library only.
"""

from __future__ import annotations

import msgspec

_NATIVE = "pytorch aten/src/ATen/native/"


class NotAHostSyncCall(msgspec.Struct, frozen=True):
    """A Python callable of torch (dotted path from ``torch``) whose host reads are of host tensors by design."""

    target: str
    reason: str
    source: str

    @property
    def module_file(self) -> str:
        """``torch.optim.adam._get_value`` → ``torch/optim/adam.py``: the end of the path a trace frame names."""
        return self.target.rsplit(".", 1)[0].replace(".", "/") + ".py"

    @property
    def function(self) -> str:
        return self.target.rsplit(".", 1)[1]

    def names_frame(self, file: str, function: str) -> bool:
        """A Python frame (its file as the trace or the interpreter gives it) is a call of this function."""
        path = file.replace("\\", "/")
        return function == self.function and (path == self.module_file or path.endswith("/" + self.module_file))


class NotAHostSync(msgspec.Struct, frozen=True):
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
    NotAHostSync(
        "quantile",
        "the check that q lies in [0, 1] runs only for CPU tensors, to avoid synchronizing an accelerator",
        _NATIVE + "Sorting.cpp quantile_out_impl (NOTE: this check is only performed when running on the CPU)",
    ),
    NotAHostSync(
        "nanquantile",
        "the check that q lies in [0, 1] runs only for CPU tensors, to avoid synchronizing an accelerator",
        _NATIVE + "Sorting.cpp quantile_out_impl (NOTE: this check is only performed when running on the CPU)",
    ),
    NotAHostSync(
        "linalg_lu_solve",
        "the pivots' range checks (`pivots.gt(0).all().item()`, `pivots.le(n)...`) run only in the CPU kernel, "
        "before LAPACK; the CUDA kernel reads nothing on the host (also under `linalg.solve` and `linalg.inv`)",
        _NATIVE + "BatchLinearAlgebraKernel.cpp lu_solve_kernel (we do some simple sanity checks here for the CPU "
        "version)",
    ),
    NotAHostSync(
        "std",
        "a device reduction on CUDA; only the CPU all-reduce reads the mean on the host",
        _NATIVE + "ReduceOps.cpp std_var_out (std_var_all_cpu for a CPU result)",
    ),
    NotAHostSync(
        "var",
        "a device reduction on CUDA; only the CPU all-reduce reads the mean on the host",
        _NATIVE + "ReduceOps.cpp std_var_out (std_var_all_cpu for a CPU result)",
    ),
)

_STEP_ON_HOST = ("the optimizer's `step` counter is a host tensor unless `capturable` or `fused` is set, "
                 "so reading it is not a device sync")
_STEP_SOURCE = "pytorch torch/optim/adam.py _init_group (note: [special device hosting for step])"

NOT_HOST_SYNC_CALLS: tuple[NotAHostSyncCall, ...] = tuple(
    NotAHostSyncCall(f"torch.optim.{module}._get_value", _STEP_ON_HOST, _STEP_SOURCE)
    for module in ("optimizer", "adagrad", "adam", "adamax", "asgd", "nadam", "radam")
)
