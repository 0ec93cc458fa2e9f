"""Kernels that read device values on the host, and the copies ``c10/cuda/CUDAFunctions.h`` makes blocking.

``memcpy_and_sync`` and ``stream_synchronize`` are where torch's sync debug mode warns
(``warn_or_error_on_sync``); each case names the ATen function that reaches one of them, or the reason a
similar call does not.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from corpus.inputs import Inputs
from corpus.model import Case, Observable

_NATIVE = "pytorch aten/src/ATen/native/"
_COPY = _NATIVE + "cuda/Copy.cu copy_kernel_cuda: memcpy_and_sync unless non_blocking"
_SCALAR = _NATIVE + "cuda/CUDAScalar.cu _local_scalar_dense_cuda: memcpy_and_sync"
_NONZERO = _NATIVE + "cuda/Nonzero.cu nonzero_cuda_out: memcpy_and_sync of the count"
_TAGGED = _NATIVE + "native_functions.yaml: tagged dynamic_output_shape"
_DATA_TAG = _NATIVE + "native_functions.yaml: tagged data_dependent_output (a host bool from device data)"
_LINALG = _NATIVE + "BatchLinearAlgebra.cpp "
_INDEXING = _NATIVE + "TensorAdvancedIndexing.cpp "
_PINNED = "https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html"


def _case(name: str, source: str, expect: str | None, run, **extra: object) -> Case:
    return Case(f"kernels.{name}", source, expect, run, **extra)


def _put(x: torch.Tensor, index: torch.Tensor, value: object) -> torch.Tensor:
    x[index] = value
    return x


def _ctc(t: Inputs, lengths_as_tensors: bool) -> torch.Tensor:
    log_probs = torch.randn(6, 2, 5, device=t.device).log_softmax(2)
    targets = torch.tensor([[1, 2, 3], [2, 3, 4]], device=t.device)
    input_lengths, target_lengths = [6, 6], [3, 2]
    if lengths_as_tensors:
        return F.ctc_loss(log_probs, targets, torch.tensor(input_lengths, device=t.device),
                          torch.tensor(target_lengths, device=t.device))
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths)


SCALAR_CASES: tuple[Case, ...] = (
    _case("item", _SCALAR, "SH109", lambda t: t.y.item()),
    _case("int", _SCALAR + " (Tensor.__int__ reads the value)", "SH109", lambda t: int(t.y)),
    _case("float", _SCALAR + " (Tensor.__float__ reads the value)", "SH109", lambda t: float(t.y)),
    _case("bool", _SCALAR + " (is_nonzero reads the value)", "SH110", lambda t: bool(t.y)),
    _case("is-nonzero", _SCALAR + " (is_nonzero reads the value)", "SH110", lambda t: torch.is_nonzero(t.y)),
    _case("tolist", _COPY + " (tolist copies to the host)", "SH201", lambda t: t.x.tolist()),
    _case("cpu", _COPY, "SH201", lambda t: t.x.cpu()),
    _case("equal", _DATA_TAG, "SH113", lambda t: torch.equal(t.x, t.x)),
    _case("allclose", _DATA_TAG, "SH113", lambda t: torch.allclose(t.x, t.x)),
)

OUTPUT_SIZE_CASES: tuple[Case, ...] = (
    _case("index-mask", _NONZERO + " (index converts a mask with nonzero)", "SH101", lambda t: t.x[t.mask]),
    _case("index-put-mask-tensor-value", _INDEXING + "canDispatchToMaskedFill: only a one-element host value",
          "SH102", lambda t: _put(t.grid, t.row_mask, t.row)),
    _case("index-put-mask-host-scalar-tensor", _INDEXING + "canDispatchToMaskedFill: a one-element host value",
          None, lambda t: _put(t.x, t.mask, torch.tensor(2.0))),
    _case("masked-fill", _INDEXING + "masked_fill: no data-dependent shape", None,
          lambda t: t.x.masked_fill_(t.mask, 2.0)),
    _case("nonzero-static", _NATIVE + "native_functions.yaml: nonzero_static has a fixed size, no shape tag",
          None, lambda t: torch.nonzero_static(t.x, size=4)),
    _case("masked-select", _TAGGED, "SH104", lambda t: torch.masked_select(t.x, t.mask)),
    _case("unique", _TAGGED, "SH105", lambda t: torch.unique(t.ints)),
    _case("unique-counts", _TAGGED, "SH105", lambda t: t.ints.unique(return_counts=True)),
    _case("unique-dim", _TAGGED, "SH105", lambda t: torch.unique(t.grid, dim=0)),
    _case("unique-consecutive", _TAGGED, "SH105", lambda t: torch.unique_consecutive(t.ints)),
    _case("bincount", _TAGGED, "SH107", lambda t: torch.bincount(t.ints)),
    _case("bincount-minlength", _TAGGED + " (minlength is only a lower bound)", "SH107",
          lambda t: torch.bincount(t.ints, minlength=8)),
    _case("histc-default-range", _NATIVE + "cuda/SummaryOps.cu _histc_cuda: min == max reads the data range",
          "SH108", lambda t: torch.histc(t.x, bins=4)),
    _case("histc-explicit-range", _NATIVE + "cuda/SummaryOps.cu _histc_cuda: a given range is not read",
          None, lambda t: torch.histc(t.x, bins=4, min=0.0, max=1.0)),
    _case("ctc-loss-tensor-lengths", _NATIVE + "LossCTC.cpp ctc_loss(Tensor lengths): lengths.to(kCPU)",
          "SH201", lambda t: _ctc(t, lengths_as_tensors=True)),
    _case("quantile", _NATIVE + "Sorting.cpp quantile_out_impl: the q range check runs only on the CPU, "
          "to avoid synchronizing an accelerator", None, lambda t: torch.quantile(t.x, 0.5)),
    _case("std-all-reduce", _NATIVE + "ReduceOps.cpp std_var_out: only a CPU result takes std_var_all_cpu", None,
          lambda t: t.grid.std()),
    _case("multinomial-one-sample", _NATIVE + "Distributions.cpp multinomial_out: _assert_async checks "
          "(pytorch PR #134818)", None, lambda t: torch.multinomial(t.probs, 1)),
    _case("multinomial-without-replacement", _NATIVE + "Distributions.cpp multinomial_out: _assert_async "
          "checks (pytorch PR #134818)", None, lambda t: torch.multinomial(t.probs, 2)),
    _case("multinomial-with-replacement", _NATIVE + "Distributions.cpp multinomial_out: sampling kernel only",
          None, lambda t: torch.multinomial(t.probs, 3, replacement=True)),
)

def _legacy_cholesky_works() -> bool:
    try:
        torch.cholesky(torch.eye(1))
    except RuntimeError:
        return False
    return True


LINALG_CASES: tuple[Case, ...] = (
    _case("linalg.svd", _LINALG + "_linalg_svd_out: _linalg_check_errors", "SH114", lambda t: torch.linalg.svd(t.a)),
    _case("linalg.lstsq", _LINALG + "linalg_lstsq_out: _linalg_check_errors", "SH114",
          lambda t: torch.linalg.lstsq(t.a, t.b)),
    # torch.cholesky, deprecated since 1.9, raises "now removed" from 2.14 on: its case runs where it still works.
    *((_case("cholesky-deprecated", _LINALG + "cholesky: _linalg_check_errors", "SH114",
             lambda t: torch.cholesky(t.spd)),) if _legacy_cholesky_works() else ()),
    _case("linalg.cholesky-not-positive-definite", _LINALG + "linalg_cholesky: the info check raises",
          "SH114", lambda t: torch.linalg.cholesky(-t.spd), raises=torch.linalg.LinAlgError),
    _case("linalg.inv-singular", _LINALG + "linalg_inv: the info check raises", "SH114",
          lambda t: torch.linalg.inv(t.singular), raises=torch.linalg.LinAlgError),
)

COPY_CASES: tuple[Case, ...] = (
    # In a CPU run both ends are host memory: nothing to copy. `t.to("cpu")` spelled on the line is reported latent,
    # as `t.cpu()` is (docs/guard.md); a copy into a host buffer is not.
    _case("to-host", _COPY, "SH201", lambda t: t.x.to("cpu"), observable=Observable.CONVENTION, on_cpu="SH201"),
    _case("copy-into-host-buffer", _COPY, "SH205", lambda t: t.host_buffer.copy_(t.x),
          observable=Observable.CONVENTION, on_cpu=None),
    _case("copy-into-pageable-non-blocking", _PINNED + " (a pageable destination blocks)", "SH203",
          lambda t: t.host_buffer.copy_(t.x, non_blocking=True), observable=Observable.CONVENTION, on_cpu=None),
    _case("to-host-non-blocking", _COPY + " (non_blocking to the host allocates pinned memory)", None,
          lambda t: t.x.to("cpu", non_blocking=True), observable=Observable.CONVENTION, on_cpu=None),
    _case("copy-into-pinned-non-blocking", _PINNED, None,
          lambda t: t.pinned(t.host_buffer).copy_(t.x, non_blocking=True), observable=Observable.CUDA),
    _case("host-to-device-cuda", _COPY, "SH202", lambda t: t.ind_host.cuda(), observable=Observable.CUDA),
    _case("host-to-device-to", _COPY, "SH202", lambda t: t.ind_host.to(t.device), observable=Observable.CUDA),
    _case("tensor-factory-on-device", _COPY + " (torch.tensor copies its host data to the device)", "SH202",
          lambda t: torch.tensor([1, 2, 3], device=t.device), observable=Observable.CUDA),
    _case("pinned-host-to-device-non-blocking", _PINNED, None,
          lambda t: t.pinned(t.ind_host).to(t.device, non_blocking=True), observable=Observable.CUDA),
)

CASES: tuple[Case, ...] = SCALAR_CASES + OUTPUT_SIZE_CASES + LINALG_CASES + COPY_CASES
