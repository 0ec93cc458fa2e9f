"""cuDNN-backed layers under the shadow device: batch norm, RNNs and CTC loss run (as a CUDA build with cuDNN would
choose their kernels, where the choice changes what reaches the host), with the host's values, and what cannot be
emulated is said at the user's line.

A CPU-only build has no cuDNN, so C++ never picks ``cudnn_batch_norm`` there: the tests call the ops a CUDA build
picks, and force the cuDNN flag state and the cuDNN CTC choice, so that the CPU-only CI runs them. The tests of the
real layers on a CUDA build are skipped elsewhere.
"""

from __future__ import annotations

import copy
import inspect

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from synchunt.shadow import NoteKind, ShadowTensor, cudnn, shadow_device

HAS_CUDNN = cudnn.compiled_with_cudnn()
needs_cudnn = pytest.mark.skipif(not HAS_CUDNN, reason="cuDNN is compiled into CUDA builds of torch only; this one "
                                 "takes the native paths (CI's CPU-only build)")


def _host(tensor: torch.Tensor) -> torch.Tensor:
    assert isinstance(tensor, ShadowTensor) and tensor.is_cuda
    return tensor.host


def test_cudnn_batch_norm_runs_on_the_native_host_kernel() -> None:
    """The op a CUDA build's ``_batch_norm_impl_index`` calls: the native kernel's outputs and running statistics,
    an empty reserve space, all on the device."""
    torch.manual_seed(0)
    x, weight, bias = torch.randn(3, 4, 5, 5), torch.rand(4) + 0.5, torch.randn(4)
    for training in (True, False):
        mean, var = torch.randn(4), torch.rand(4) + 0.5
        host_mean, host_var = mean.clone(), var.clone()  # updated in place in training, as the device's
        expected = torch.native_batch_norm(x, weight, bias, host_mean, host_var, training, 0.1, 1e-5)
        with shadow_device() as shadow:
            device_mean, device_var = mean.cuda(), var.cuda()
            out = torch.ops.aten.cudnn_batch_norm(x.cuda(), weight.cuda(), bias.cuda(), device_mean, device_var,
                                                  training, 0.1, 1e-5)
        assert shadow.notes == ()
        for got, want in zip(out[:3], expected, strict=True):
            torch.testing.assert_close(_host(got), want)
        assert _host(out[3]).numel() == 0 and out[3].dtype == torch.uint8
        torch.testing.assert_close(_host(device_mean), host_mean)
        torch.testing.assert_close(_host(device_var), host_var)
        assert torch.equal(host_mean, mean) is not training


@pytest.mark.parametrize("make", [lambda: nn.LSTM(3, 5, num_layers=2, bidirectional=True),
                                  lambda: nn.GRU(3, 5, num_layers=2), lambda: nn.LSTM(3, 5, proj_size=2),
                                  lambda: nn.GRU(3, 5, batch_first=True, bias=False)],
                         ids=["lstm-bidirectional", "gru", "lstm-projections", "gru-batch-first-no-bias"])
def test_rnns_forward_as_on_the_host(make) -> None:
    """RNNs take torch's native CUDA path, whose fused cells run on host kernels: the CPU's outputs and states."""
    torch.manual_seed(0)
    module = make()
    x = torch.randn(4, 2, 3)
    want_out, want_hidden = module(x)
    with shadow_device() as shadow:
        device_module = copy.deepcopy(module).to("cuda")
        out, hidden = device_module(x.cuda())
    assert shadow.notes == ()
    torch.testing.assert_close(_host(out), want_out)
    for got, want in zip(hidden if isinstance(hidden, tuple) else (hidden,),
                         want_hidden if isinstance(want_hidden, tuple) else (want_hidden,), strict=True):
        torch.testing.assert_close(_host(got), want)


def test_a_packed_sequence_runs_through_the_native_cells() -> None:
    torch.manual_seed(0)
    module = nn.LSTM(3, 4)
    x, lengths = torch.randn(5, 3, 3), torch.tensor([5, 3, 2])
    want, _ = module(nn.utils.rnn.pack_padded_sequence(x, lengths))
    with shadow_device() as shadow:
        packed = nn.utils.rnn.pack_padded_sequence(x.cuda(), lengths)
        got, _ = copy.deepcopy(module).to("cuda")(packed)
        padded, got_lengths = nn.utils.rnn.pad_packed_sequence(got)
    assert packed.batch_sizes.device.type == "cpu" and not isinstance(packed.batch_sizes, ShadowTensor)
    torch.testing.assert_close(_host(got.data), want.data)
    assert padded.is_cuda and got_lengths.tolist() == lengths.tolist()
    assert shadow.notes == ()  # the lengths and batch sizes are the host's, as torch wants them


def test_rnns_run_with_cudnn_off_and_the_users_flag_is_left_as_set(monkeypatch) -> None:
    """cuDNN is off only while an RNN entry point runs (its kernel cannot run on the host); the flag the user set,
    on or off, reads the same inside the region, after the call and after the region."""
    seen: list[bool] = []
    fused = cudnn.HOST_KERNELS["_thnn_fused_lstm_cell"]

    def spy(*args, **kwargs):
        seen.append(torch.backends.cudnn.enabled)
        return fused(*args, **kwargs)

    monkeypatch.setitem(cudnn.HOST_KERNELS, "_thnn_fused_lstm_cell", spy)
    for enabled in (True, False):
        seen.clear()
        with torch.backends.cudnn.flags(enabled=enabled):
            with shadow_device():
                assert torch.backends.cudnn.enabled is enabled
                module = nn.LSTM(2, 3).to("cuda")
                module(torch.randn(2, 1, 2, device="cuda"))
                assert torch.backends.cudnn.enabled is enabled
            assert torch.backends.cudnn.enabled is enabled
        assert seen == [False, False]  # one fused cell per step, each with cuDNN off
    assert torch.nn.modules.rnn.RNNBase.flatten_parameters.__name__ == "flatten_parameters"
    assert "lstm" not in vars(torch._VF)  # the entry points are torch's own again


def _ctc_inputs() -> tuple[torch.Tensor, torch.Tensor, list[int], list[int]]:
    torch.manual_seed(0)
    log_probs = torch.randn(10, 2, 5).log_softmax(2)
    targets = torch.randint(1, 5, (7,), dtype=torch.int32)
    return log_probs, targets, [10, 10], [4, 3]


@pytest.mark.parametrize("cudnn_built", [False, True], ids=["native-ctc", "cudnn-ctc"])
def test_ctc_loss_takes_the_kernel_a_cuda_build_picks(monkeypatch, cudnn_built: bool) -> None:
    """cuDNN's CTC (1-D int32 targets on the host, every input length the full one) where a CUDA build with cuDNN
    and the flag on picks it, ATen's otherwise; the host's loss either way."""
    monkeypatch.setattr(cudnn, "compiled_with_cudnn", lambda: cudnn_built)
    ran: list[str] = []
    host_ctc = cudnn.HOST_KERNELS["_cudnn_ctc_loss"]

    def spy(*args, **kwargs):
        ran.append("cudnn")
        return host_ctc(*args, **kwargs)

    monkeypatch.setitem(cudnn.HOST_KERNELS, "_cudnn_ctc_loss", spy)
    log_probs, targets, inputs, lengths = _ctc_inputs()
    want = F.ctc_loss(log_probs, targets, inputs, lengths)
    cases = {"int lengths, host int32 targets": (targets, inputs, lengths, True),
             "tensor lengths, host int32 targets": (targets, torch.tensor(inputs, dtype=torch.int32),
                                                    torch.tensor(lengths, dtype=torch.int32), True),
             "device targets": (targets.cuda, inputs, lengths, False),
             "long targets": (targets.long(), inputs, lengths, False),
             "a short input": (targets, [10, 9], lengths, False)}
    for name, (labels, input_lengths, target_lengths, cudnn_ctc) in cases.items():
        ran.clear()
        with shadow_device() as shadow:
            labels_ = labels() if callable(labels) else labels
            loss = F.ctc_loss(log_probs.cuda(), labels_, input_lengths, target_lengths)
            with torch.backends.cudnn.flags(enabled=False):
                F.ctc_loss(log_probs.cuda(), labels_, input_lengths, target_lengths)
        expected = want if input_lengths == inputs or not isinstance(input_lengths, list) else \
            F.ctc_loss(log_probs, targets, input_lengths, target_lengths)
        torch.testing.assert_close(_host(loss), expected, msg=name)
        assert ran == (["cudnn"] if cudnn_ctc and cudnn_built else []), name  # the flag off: never cuDNN's
        assert [n for n in shadow.notes if n.kind == NoteKind.NO_HOST_KERNEL] == [], name


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_with_host_tensor_lengths_is_the_gpu_runs_fast_path(reduction: str) -> None:
    """Host tensor lengths beside device log-probs: a GPU run reads them where they are and its native kernel copies
    them to the device, blocking (SH202), with no device-to-host read and no host tensor beside a device one (the
    mean's division included). Device lengths are read back to the host first (SH201)."""
    import synchunt

    torch.manual_seed(0)
    log_probs, targets = torch.randn(12, 2, 5).log_softmax(2), torch.randint(1, 5, (2, 4))
    host_lengths = torch.full((2,), 12, dtype=torch.long), torch.full((2,), 4, dtype=torch.long)
    want = F.ctc_loss(log_probs, targets, *host_lengths, reduction=reduction)
    with shadow_device() as shadow:
        device_log_probs, device_targets = log_probs.cuda(), targets.cuda()
        device_lengths = tuple(length.cuda() for length in host_lengths)
        with synchunt.watch() as host:
            loss = F.ctc_loss(device_log_probs, device_targets, *host_lengths, reduction=reduction)
        with synchunt.watch() as device:
            F.ctc_loss(device_log_probs, device_targets, *device_lengths, reduction=reduction)
    torch.testing.assert_close(_host(loss), want)
    assert [sync.rule for sync in host.syncs] == ["SH202"]
    assert [sync.rule for sync in device.syncs] == ["SH201"]
    assert shadow.notes == ()


def test_cudnn_ctc_loss_returns_the_cost_and_its_gradient() -> None:
    """``_cudnn_ctc_loss`` gives the per-sequence cost and the gradient of their sum with respect to the
    log-probabilities, as cuDNN does (its backward scales that gradient)."""
    log_probs, targets, inputs, lengths = _ctc_inputs()
    leaf = log_probs.clone().requires_grad_()
    costs = F.ctc_loss(leaf, targets, inputs, lengths, reduction="none")
    costs.sum().backward()
    with shadow_device():
        cost, grad = torch.ops.aten._cudnn_ctc_loss(log_probs.cuda(), targets, inputs, lengths, 0, True, False)
    torch.testing.assert_close(_host(cost), costs.detach())
    torch.testing.assert_close(_host(grad), leaf.grad)


def test_an_op_without_a_host_kernel_is_said_at_the_users_line() -> None:
    """cuDNN's own RNN weight packing has no host kernel: the note and the error name the caller's line, not the
    emulation's."""
    weights = [torch.ones(20, 3), torch.ones(20, 5)]
    with shadow_device() as shadow:
        device_weights = [w.cuda() for w in weights]
        line = inspect.currentframe().f_lineno + 2
        with pytest.raises(RuntimeError, match="has no host kernel") as raised:
            torch.ops.aten._cudnn_rnn_flatten_weight(device_weights, 2, 3, 2, 5, 0, 1, False, False)
    assert f"called at {__file__}:{line}," in str(raised.value)
    [note] = [n for n in shadow.notes if n.kind == NoteKind.NO_HOST_KERNEL]
    assert (note.op, note.file, note.line) == ("aten::_cudnn_rnn_flatten_weight", __file__, line)


@needs_cudnn
def test_cudnn_layers_of_a_cuda_build_run_with_the_hosts_values(monkeypatch) -> None:
    """On a CUDA build C++ picks cuDNN for batch norm (eval and train), and would for LSTM/GRU: the region runs
    them, batch norm through ``cudnn_batch_norm`` as on a GPU, with the host's values and the user's flag kept."""
    calls: list[bool] = []
    batch_norm = cudnn.HOST_KERNELS["cudnn_batch_norm"]

    def spy(*args, **kwargs):
        calls.append(args[5])  # training
        return batch_norm(*args, **kwargs)

    monkeypatch.setitem(cudnn.HOST_KERNELS, "cudnn_batch_norm", spy)
    torch.manual_seed(0)
    modules = [nn.BatchNorm2d(4).eval(), nn.BatchNorm2d(4), nn.LSTM(3, 5, num_layers=2), nn.GRU(3, 5)]
    inputs = [torch.randn(2, 4, 5, 5), torch.randn(2, 4, 5, 5), torch.randn(4, 2, 3), torch.randn(4, 2, 3)]
    with shadow_device() as shadow:
        device_modules = [copy.deepcopy(module).to("cuda") for module in modules]
        outs = [module(x.cuda()) for module, x in zip(device_modules, inputs, strict=True)]
        assert torch.backends.cudnn.enabled
    assert shadow.notes == ()
    assert calls == [False, True]
    for module, x, out in zip(modules, inputs, outs, strict=True):
        want = module(x)
        got, want = (out[0], want[0]) if isinstance(out, tuple) else (out, want)
        torch.testing.assert_close(_host(got), want)
    torch.testing.assert_close(device_modules[1].running_mean.host, modules[1].running_mean)


@needs_cudnn
def test_a_resnet_detection_model_runs_on_a_cuda_build() -> None:
    """RetinaNet (a ResNet-50 backbone: cuDNN batch norm on a CUDA build) forward, untrained, one image."""
    detection = pytest.importorskip("torchvision.models.detection")
    with shadow_device() as shadow:
        model = detection.retinanet_resnet50_fpn(weights=None, weights_backbone=None).eval().to("cuda")
        with torch.no_grad():
            [found] = model([torch.rand(3, 128, 128, device="cuda")])
    assert shadow.notes == ()
    assert {name: value.device.type for name, value in found.items()} == {"boxes": "cuda", "scores": "cuda",
                                                                          "labels": "cuda"}
