"""Where data lives under the shadow device: what the code puts on the accelerator stays there through every op,
what it keeps on the host stays plain, and the values are the CPU's."""

from __future__ import annotations

import threading

import pytest
import torch
from torch import nn

from synchunt.shadow import NoteKind, ShadowTensor, shadow_device

CUDA0 = torch.device("cuda", 0)


def _on_device(tensor: torch.Tensor) -> bool:
    return isinstance(tensor, ShadowTensor) and tensor.is_cuda and tensor.device == CUDA0


@pytest.fixture
def shadow():
    with shadow_device() as device:
        yield device


def test_factories_and_moves_land_on_the_device(shadow) -> None:
    host = torch.arange(6.0)
    made = [torch.zeros(3, device="cuda"), torch.full((2,), 7, device=CUDA0), torch.randn(4, device="cuda:0"),
            torch.arange(5, device="cuda"), torch.tensor([1, 2], device="cuda"), host.to("cuda"), host.cuda(),
            host.to(device=CUDA0, dtype=torch.float16), torch.empty_like(host, device="cuda")]
    assert all(_on_device(t) for t in made)
    assert made[3].tolist() == [0, 1, 2, 3, 4] and made[4].tolist() == [1, 2]
    assert made[5].get_device() == 0 and made[7].dtype == torch.float16


def test_results_of_device_ops_stay_on_the_device_with_the_cpu_values(shadow) -> None:
    host = torch.arange(12.0).reshape(3, 4)
    device = host.cuda()
    results = {"add": (device + 1, host + 1), "matmul": (device @ device.T, host @ host.T),
               "sum": (device.sum(dim=0), host.sum(dim=0)), "view": (device[1:, ::2], host[1:, ::2]),
               "new": (device.new_ones(2), host.new_ones(2)),
               "like": (torch.zeros_like(device), torch.zeros_like(host)),
               "cat": (torch.cat([device, device]), torch.cat([host, host]))}
    for name, (on_device, expected) in results.items():
        assert _on_device(on_device), name
        assert torch.equal(on_device.cpu(), expected), name


def test_host_copies_are_plain_tensors(shadow) -> None:
    device = torch.arange(4.0, device="cuda")
    for copy in (device.cpu(), device.to("cpu"), device.to(torch.device("cpu")), device.detach().cpu().clone()):
        assert type(copy) is torch.Tensor and copy.device.type == "cpu"
    plain = torch.arange(3) * 2  # never on the device
    assert type(plain) is torch.Tensor


def test_in_place_and_out_ops_keep_the_callers_tensor(shadow) -> None:
    device = torch.zeros(4, device="cuda")
    assert device.add_(2) is device and device.tolist() == [2.0] * 4
    out = torch.empty(0, device="cuda")
    assert torch.arange(3, out=out) is out and out.shape == (3,)  # the host data was resized; so is the tensor
    assert device.unsqueeze_(0) is device and device.shape == (1, 4)
    device.resize_(2)
    assert device.shape == (2,) and device.host.shape == (2,)


def test_a_module_moved_to_the_device_has_device_parameters(shadow) -> None:
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    reference = [p.detach().clone() for p in model.parameters()]
    model.to("cuda")
    params = list(model.parameters())
    assert all(_on_device(p) and isinstance(p, nn.Parameter) and p.requires_grad for p in params)
    assert all(torch.equal(p.detach().cpu(), r) for p, r in zip(params, reference, strict=True))
    output = model(torch.ones(2, 4, device="cuda"))
    assert _on_device(output) and output.requires_grad
    assert _on_device(nn.Linear(2, 2).cuda().weight)


def test_pinned_host_memory_is_host_memory_that_says_pinned(shadow) -> None:
    staging = torch.empty(8, pin_memory=True)
    pinned = torch.arange(8.0).pin_memory()
    assert staging.device.type == "cpu" and staging.is_pinned() and pinned.is_pinned()
    assert pinned[2:].is_pinned() and not (pinned + 1).is_pinned() and not torch.ones(2).is_pinned()
    assert pinned.pin_memory() is pinned
    back = torch.arange(4.0, device="cuda").to("cpu", non_blocking=True)
    assert back.is_pinned()  # _to_copy pins the host buffer of a non_blocking copy from the device
    assert pinned.numpy().tolist() == [float(n) for n in range(8)]


def test_device_tensors_made_on_other_threads_are_device_tensors(shadow) -> None:
    made: list[torch.Tensor] = []
    worker = threading.Thread(target=lambda: made.append(torch.ones(2, device="cuda") * 3))
    worker.start()
    worker.join()
    assert _on_device(made[0]) and made[0].tolist() == [3.0, 3.0]


def test_copies_generators_saving_and_loading(shadow, tmp_path) -> None:
    import copy

    model = nn.Linear(2, 2).cuda()
    twin = copy.deepcopy(model)
    assert _on_device(twin.weight) and isinstance(twin.weight, nn.Parameter)
    assert twin.weight.host is not model.weight.host and torch.equal(twin.weight.cpu(), model.weight.cpu())
    generator = torch.Generator("cuda").manual_seed(0)
    assert generator.device == CUDA0 and isinstance(generator, torch.Generator)
    assert isinstance(torch.default_generator, torch.Generator) and type(torch.Generator()) is torch._C.Generator
    drawn = torch.randn(3, generator=generator, device="cuda")
    assert _on_device(drawn) and drawn.tolist() == torch.randn(3, generator=torch.Generator().manual_seed(0)).tolist()
    with pytest.raises(RuntimeError, match="saving or pickling a device tensor is not emulated"):
        torch.save(model.weight, tmp_path / "weight.pt")
    torch.save({name: value.cpu() for name, value in model.state_dict().items()}, tmp_path / "model.pt")
    loaded = torch.load(tmp_path / "model.pt", map_location="cuda")
    assert all(_on_device(value) for value in loaded.values())
    assert type(torch.load(tmp_path / "model.pt")["weight"]) is torch.Tensor
    twin.load_state_dict(loaded)
    assert torch.equal(twin.weight.cpu(), model.weight.cpu())


def test_what_a_gpu_refuses_is_refused(shadow) -> None:
    device = torch.arange(3.0, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        device.numpy()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.zeros(1, device="cuda:1")
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        device.pin_memory()
    assert repr(device) == "tensor([0., 1., 2.], device='cuda:0')"


def test_the_cuda_api_answers_for_one_gpu_and_is_put_back() -> None:
    available_before = torch.cuda.is_available()
    with shadow_device():
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1
        assert torch.cuda.get_device_capability() == (8, 0) and torch.cuda.is_bf16_supported()
        assert torch.get_device_module("cuda").current_device() == 0
        assert torch.accelerator.is_available() and torch.accelerator.current_accelerator().type == "cuda"
        with torch.cuda.device(0):
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                assert torch.cuda.current_stream() == stream
            assert torch.cuda.current_stream() == torch.cuda.default_stream()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        end.record()
        assert start.query() and end.elapsed_time(end) == 0.0 and start.elapsed_time(end) >= 0.0
        with shadow_device():  # nested: still one activation
            assert torch.cuda.is_available()
        assert torch.cuda.is_available()
    assert torch.cuda.is_available() == available_before
    with pytest.raises((RuntimeError, AssertionError, NotImplementedError)):
        torch.zeros(1, device="cuda")  # no device once it is gone


def test_what_it_cannot_follow_is_noted_at_the_users_line(shadow) -> None:
    device = torch.arange(4.0, device="cuda")
    address_line = _line_of("device.data_ptr()")
    device.data_ptr()
    mixed_line = _line_of("device * torch.ones(4)")
    assert _on_device(device * torch.ones(4))  # a GPU refuses the mix; the emulation goes on, and says so
    custom_line = _line_of("_fixture_double(device)")
    assert _on_device(_fixture_double(device))
    with pytest.raises(RuntimeError, match="CUDA graphs are not emulated"):
        torch.cuda.CUDAGraph()
    kinds = {(note.kind, note.line) for note in shadow.notes}
    assert {(NoteKind.DATA_POINTER, address_line), (NoteKind.MIXED_DEVICES, mixed_line),
            (NoteKind.CUSTOM_OP, custom_line)} <= kinds
    assert {note.kind for note in shadow.notes} == {NoteKind.DATA_POINTER, NoteKind.MIXED_DEVICES,
                                                    NoteKind.CUSTOM_OP, NoteKind.NOT_EMULATED}
    assert all(note.file == __file__ for note in shadow.notes)


def test_the_backward_pass_of_device_tensors_is_refused_in_one_line(shadow) -> None:
    model = nn.Linear(3, 1).cuda()
    loss = model(torch.ones(2, 3, device="cuda")).sum()
    with pytest.raises(RuntimeError, match="backward pass of device tensors cannot run without a GPU"):
        loss.backward()
    assert [note.kind for note in shadow.notes] == [NoteKind.NOT_EMULATED]


@torch.library.custom_op("synchunt_fixture::double", mutates_args=())
def _fixture_double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


def _line_of(text: str) -> int:
    import inspect

    lines, _ = inspect.findsource(test_what_it_cannot_follow_is_noted_at_the_users_line)
    return next(n for n, line in enumerate(lines, start=1) if line.strip().startswith(text)
                or f"({text})" in line)


def test_a_machine_with_a_gpu_is_refused(monkeypatch) -> None:
    from synchunt.errors import UsageError

    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)
    monkeypatch.setattr(torch._C, "_cuda_getDeviceCount", lambda: 1, raising=False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)  # what torch sees, not what torch.cuda is made to say
    with pytest.raises(UsageError, match="a GPU is here: profile with --device cuda"):
        shadow_device().__enter__()
    from synchunt.shadow import is_active

    assert not is_active()  # a refusal leaves nothing active


@pytest.mark.skipif(not torch.backends.cuda.is_built() or torch.cuda.device_count() > 0,
                    reason="a CUDA build of torch on a machine without a GPU (as CI machines of GPU projects are)")
def test_a_cuda_build_without_a_gpu_runs_the_shadow_device() -> None:
    """A CUDA build's real kernels and device guard would ask the driver; the shadow device replaces what a
    factory reaches and runs the rest through its tensors, as on a CPU-only build."""
    from synchunt.guard import watch
    from synchunt.shadow import native

    with shadow_device() as shadow, watch() as guard:
        made = torch.empty(3, device="cuda").fill_(2.0) + torch.ones(3).to("cuda")
        picked = torch.arange(4, device="cuda")[torch.tensor([1, 3])]
        total = made.sum().item()
    assert made.is_cuda and picked.is_cuda and total == 9.0 and picked.tolist() == [1, 3]
    assert [r.rule for r in guard.violations] == ["SH202", "SH202", "SH109"]
    assert shadow.notes == ()
    assert native.factories_with_cuda_kernels()  # the overrides it needed here
    with pytest.raises(RuntimeError):
        torch.empty(1, device="cuda")  # after exit: the real kernel, and no driver
