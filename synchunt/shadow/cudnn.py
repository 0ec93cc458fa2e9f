"""cuDNN and the other CUDA-only kernels of torch's layers, under the shadow device.

A CUDA build picks cuDNN in C++ for batch norm, RNNs and CTC loss (``cudnn_batch_norm``, ``_cudnn_rnn``,
``_cudnn_ctc_loss``); its native CUDA path for RNN cells is fused (``_thnn_fused_lstm_cell``). None has a host
kernel. What the emulation does for each follows from what a GPU run does at the host, op by op:

- **Batch norm** (``_batch_norm_impl_index`` in aten/src/ATen/native/Normalization.cpp: ``use_cudnn`` when the
  input is CUDA, cuDNN is compiled in and ``cudnn_enabled``): neither ``cudnn_batch_norm`` nor
  ``native_batch_norm`` reads device data on the host, so the op the GPU run calls, ``cudnn_batch_norm``, runs
  here on ``native_batch_norm``'s host kernel (same outputs; its reserve space, which only cuDNN's backward reads,
  is empty as the native path's is). The op stream stays the GPU run's; nothing global is switched.
- **RNNs** (``use_cudnn`` in RNN.cpp, ``cudnn_is_acceptable``; ``flatten_parameters`` in torch/nn/modules/rnn.py):
  cuDNN's kernel packs the weights in a layout cuDNN alone knows (``_cudnn_rnn_flatten_weight`` asks the library
  for the offsets), so it cannot be run on the host. Its host side reads no device data (a packed sequence's
  ``batch_sizes`` are already on the host; cudnn/RNN.cpp passes cuDNN no device sequence lengths, ``nullptr``),
  as the native path's does not: the RNN entry points run with cuDNN
  switched off for the call (saved and restored, so the user's ``torch.backends.cudnn.enabled`` reads as set),
  and the native path's fused cells run here on host kernels computing what RNN.cu's kernels compute. The flag is
  process-wide: another thread's batch norm during that call takes the native kernel, which reads no more.
- **CTC loss** (LossCTC.cpp ``ctc_loss_impl`` and cudnn/LossCTC.cpp ``_use_cudnn_ctc_loss``): here the two paths
  differ at the host. cuDNN's takes 1-D int32 targets in host memory and host lengths; ATen's kernel copies the
  lengths to the device, blocking. So the choice is answered as a CUDA build with cuDNN answers it, from the
  user's cuDNN flag, and ``_cudnn_ctc_loss`` runs on the host CTC kernels (the cost, and the gradient cuDNN
  returns with it). A shadow tensor is a tensor subclass, so ``ctc_loss`` with tensor lengths takes the
  subclass path (``_use_cudnn_ctc_loss.Tensor``); it is answered with the conditions of the plain path a GPU run
  takes (its lengths copied to the host first: ``targets`` on the host, every input length the full one).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from synchunt.shadow.tensor import ShadowTensor

HostKernel = Callable[..., Any]
_host_list = torch._C.TensorBase.tolist

_set_enabled = torch._C._set_cudnn_enabled
_get_enabled = torch._C._get_cudnn_enabled


def compiled_with_cudnn() -> bool:
    """Whether this torch build has cuDNN (what ``detail::getCUDAHooks().compiledWithCuDNN()`` answers)."""
    return bool(getattr(torch._C, "_has_cudnn", False))


@contextmanager
def cudnn_off() -> Iterator[None]:
    """cuDNN switched off for a call that would take a cuDNN kernel the host cannot run; the flag is put back."""
    enabled = _get_enabled()
    if not enabled:
        yield
        return
    _set_enabled(False)
    try:
        yield
    finally:
        _set_enabled(enabled)


def without_cudnn(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        with cudnn_off():
            return original(*args, **kwargs)

    return call


def _cudnn_batch_norm(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                      running_mean: torch.Tensor | None, running_var: torch.Tensor | None, training: bool,
                      exponential_average_factor: float, epsilon: float) -> tuple[torch.Tensor, ...]:
    output, save_mean, save_invstd = torch.ops.aten.native_batch_norm.default(
        input, weight, bias, running_mean, running_var, training, exponential_average_factor, epsilon)
    reserve = torch.empty(0, dtype=torch.uint8)
    return output, save_mean, save_invstd, reserve


def _gates(gates: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return gates if bias is None else gates + bias


def _thnn_fused_lstm_cell(input_gates: torch.Tensor, hidden_gates: torch.Tensor, cx: torch.Tensor,
                          input_bias: torch.Tensor | None = None,
                          hidden_bias: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
    """RNN.cu's ``lstm_cell_forward``: gates [input, forget, cell, output]; the workspace keeps them activated."""
    gates = _gates(input_gates, input_bias) + _gates(hidden_gates, hidden_bias)
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate, forgetgate, cellgate, outgate = ingate.sigmoid(), forgetgate.sigmoid(), cellgate.tanh(), outgate.sigmoid()
    cy = forgetgate * cx + ingate * cellgate
    hy = outgate * cy.tanh()
    return hy, cy, torch.cat((ingate, forgetgate, cellgate, outgate), 1)


def _thnn_fused_gru_cell(input_gates: torch.Tensor, hidden_gates: torch.Tensor, hx: torch.Tensor,
                         input_bias: torch.Tensor | None = None,
                         hidden_bias: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """RNN.cu's ``gru_cell_forward``: gates [reset, input, new]; the workspace keeps [r, z, n, hx, hn]."""
    ir, ii, in_ = _gates(input_gates, input_bias).chunk(3, 1)
    hr, hi, hn = _gates(hidden_gates, hidden_bias).chunk(3, 1)
    resetgate, inputgate = (ir + hr).sigmoid(), (ii + hi).sigmoid()
    newgate = (in_ + resetgate * hn).tanh()
    hy = newgate + inputgate * (hx - newgate)
    return hy, torch.cat((resetgate, inputgate, newgate, hx, hn), 1)


def read_lengths(lengths: Any) -> list[int]:
    if isinstance(lengths, torch.Tensor):
        return [int(value) for value in lengths.reshape(-1).to(torch.long)]
    return [int(value) for value in lengths]


def _cudnn_ctc_loss(log_probs: torch.Tensor, targets: torch.Tensor, input_lengths: Any, target_lengths: Any,
                    blank: int, deterministic: bool, zero_infinity: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """cuDNN's CTC: the cost per sequence and its gradient with respect to ``log_probs`` (cuDNN's softmax
    normalization of log-probabilities gives ATen's CTC gradient). ``zero_infinity`` is for the backward only."""
    inputs, targets_ = read_lengths(input_lengths), read_lengths(target_lengths)
    labels = targets.to(torch.long)
    cost, alpha = torch.ops.aten._ctc_loss.default(log_probs, labels, inputs, targets_, blank, False)
    grad = torch.ops.aten._ctc_loss_backward.default(torch.ones_like(cost), log_probs, labels, inputs, targets_,
                                                     cost, alpha, blank, zero_infinity)
    return cost, grad


# by packet: the CUDA-only ops the emulation runs on host kernels computing the same (their arguments unwrapped)
HOST_KERNELS: dict[str, HostKernel] = {
    "cudnn_batch_norm": _cudnn_batch_norm,
    "_thnn_fused_lstm_cell": _thnn_fused_lstm_cell,
    "_thnn_fused_gru_cell": _thnn_fused_gru_cell,
    "_cudnn_ctc_loss": _cudnn_ctc_loss,
}


_BY_OP: dict[int, tuple[str | None, Any]] = {}  # by id, as synchunt.shadow.ops keeps its infos


def host_kernel(func: torch._ops.OpOverload) -> HostKernel | None:
    """The host kernel standing in for ``func``'s CUDA-only kernel (its ``out=`` overloads are not emulated)."""
    known = _BY_OP.get(id(func))
    if known is None:
        packet = func._schema.name.removeprefix("aten::")
        emulated = func._overloadname != "out" and func.namespace == "aten" and packet in HOST_KERNELS
        known = _BY_OP[id(func)] = (packet if emulated else None, func)
    return HOST_KERNELS[known[0]] if known[0] is not None else None


def host_lengths_as_lists(original: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.ctc_loss`` with host tensor lengths beside device log-probs, as a GPU run takes it: ATen's fast path
    (LossCTC.cpp ``ctc_loss`` for plain tensors) reads the host lengths as int lists and calls the int-list
    overload. A shadow tensor is a tensor subclass, which would send the call down the subclass path instead,
    where the mean divides the device cost by the host lengths: an op a GPU run never makes."""
    @functools.wraps(original)
    def call(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, *args: Any,
             **kwargs: Any) -> Any:
        lengths = (input_lengths, target_lengths)
        if (isinstance(log_probs, ShadowTensor)
                and all(isinstance(length, torch.Tensor) and not isinstance(length, ShadowTensor)
                        for length in lengths)):
            # TensorBase's own method: the host read ATen makes here is no sync, so not the guard's patched one
            input_lengths, target_lengths = _host_list(input_lengths), _host_list(target_lengths)
        return original(log_probs, targets, input_lengths, target_lengths, *args, **kwargs)

    return call


# The Python entry points of torch's RNNs, run with cuDNN off (see the module's docstring): the functional ones
# nn.RNN/LSTM/GRU call, and the module method that would pack the weights for cuDNN.
RNN_FUNCTIONS = ("lstm", "gru", "rnn_tanh", "rnn_relu")


def use_cudnn_ctc_loss(log_probs: torch.Tensor, targets: torch.Tensor, input_lengths: list[int],
                       target_lengths: list[int], blank: int) -> bool:
    """cuDNN's CTC choice on a CUDA build (cudnn/LossCTC.cpp ``_use_cudnn_ctc_loss``), ``targets`` as the user
    holds it (the device it is on decides) and the lengths already read."""
    if not (compiled_with_cudnn() and _get_enabled()):
        return False
    usable = (blank == 0 and targets.dim() == 1 and log_probs.dtype == torch.float32
              and targets.dtype == torch.int32 and targets.device.type == "cpu" and targets.is_contiguous()
              and log_probs.device.type == "cuda" and log_probs.dim() == 3)
    if not usable:
        return False
    longest = log_probs.size(0)
    if any(length != longest for length in input_lengths):
        return False
    return all(length < 256 and length <= input_lengths[b] for b, length in enumerate(target_lengths)
               if b < len(input_lengths))
