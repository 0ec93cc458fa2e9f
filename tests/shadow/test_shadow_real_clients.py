"""Real clients where they are installed (not a synchunt dependency): diffusers' Euler scheduler keeps its sigmas on
the host by design, transformers' generate() loop reads a device flag once per token."""

from __future__ import annotations

import linecache
from collections import Counter

import pytest
import torch

from synchunt.guard import watch
from synchunt.shadow import shadow_device


def _denoise(diffusers, device: str) -> torch.Tensor:
    scheduler = diffusers.EulerDiscreteScheduler()
    scheduler.set_timesteps(10, device=device)
    latents = torch.randn(1, 4, 8, 8, device=device)
    for timestep in scheduler.timesteps:
        noise = scheduler.scale_model_input(latents, timestep) * 0.1
        latents = scheduler.step(noise, timestep, latents).prev_sample
    return latents


def test_diffusers_sigmas_reads_stop_counting_and_their_copy_starts() -> None:
    diffusers = pytest.importorskip("diffusers")
    with watch() as cpu_run:
        _denoise(diffusers, "cpu")
    with shadow_device() as shadow, watch() as guard:
        latents = _denoise(diffusers, "cuda")
    counted = Counter(record.rule for record in guard.violations)
    assert counted == Counter({"SH202": 2, "SH201": 1, "SH103": 1, "SH109": 1})  # copies in, sigmas out, index
    copy_out = next(r for r in guard.violations if r.rule == "SH201")
    assert 'sigmas.to("cpu")' in linecache.getline(copy_out.file, copy_out.line)
    host = [record for record in guard.syncs if record.residency == "host"]
    assert host and all(not record.counts for record in host)  # the comparisons of host sigmas
    assert latents.is_cuda and shadow.notes == ()
    # The CPU run counts every one of those host reads and the copy out (`.to("cpu")` names the host), and cannot
    # see the copies in.
    assert {(r.file, r.line) for r in host} <= {(r.file, r.line) for r in cpu_run.violations}
    assert (copy_out.file, copy_out.line) in {(r.file, r.line) for r in cpu_run.violations if r.rule == "SH201"}
    assert cpu_run.count() == len(host) + 3 and cpu_run.count("SH202") == 0


_FACTORIES = ("empty", "zeros", "ones", "full", "arange", "tensor", "randn")


def test_transformers_loading_keeps_its_buffers_and_leaves_nothing_behind(tmp_path) -> None:
    """transformers builds a model under ``torch.device("meta")`` and fills its non-persistent buffers
    (``position_ids``) in ``_init_weights``: under the shadow device they equal a plain run's, and after it exits
    loading is as before it (torch's cached set of device factories holds torch's own functions)."""
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(vocab_size=40, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=16)
    torch.manual_seed(0)
    transformers.BertModel(config).save_pretrained(tmp_path)

    def buffers(model) -> dict[str, torch.Tensor]:
        return {name: buffer.cpu() for name, buffer in model.named_buffers()}

    plain = buffers(transformers.BertModel.from_pretrained(tmp_path))
    factories = {name: getattr(torch, name) for name in _FACTORIES}
    torch.utils._device._device_constructors.cache_clear()  # as in a fresh process: first filled under the shadow
    with shadow_device() as shadow:
        model = transformers.BertModel.from_pretrained(tmp_path)
        on_host = buffers(model)
        moved = model.to("cuda")
        assert moved.embeddings.position_ids.is_cuda
        on_device = buffers(moved)
    assert shadow.notes == ()
    after = buffers(transformers.BertModel.from_pretrained(tmp_path))
    assert plain.keys() == on_host.keys() == on_device.keys() == after.keys() and "embeddings.position_ids" in plain
    for name, expected in plain.items():
        for run in (on_host, on_device, after):
            assert torch.equal(run[name], expected), name
    assert {name: getattr(torch, name) for name in _FACTORIES} == factories
    assert factories["empty"] in torch.utils._device._device_constructors()


@pytest.mark.slow
def test_transformers_generate_runs_on_the_shadow_device_with_the_cpu_tokens() -> None:
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=32,
                                     bos_token_id=0, eos_token_id=0)
    tokens = {}
    for device in ("cpu", "cuda"):
        with shadow_device() as shadow:
            torch.manual_seed(0)
            model = transformers.GPT2LMHeadModel(config).to(device).eval()
            with torch.no_grad(), watch() as guard:
                out = model.generate(torch.tensor([[1, 2, 3]], device=device), max_new_tokens=5, do_sample=False,
                                     pad_token_id=0)
            tokens[device] = out.tolist()
            if device == "cuda":
                assert out.is_cuda and shadow.notes == ()
                assert {r.residency for r in guard.syncs} == {"device"}
                assert Counter(r.rule for r in guard.violations)["SH110"] >= 4  # a device flag read per token
    assert tokens["cpu"] == tokens["cuda"]


def test_torchvision_nms_is_followed_as_its_cuda_kernel_waits() -> None:
    """torchvision's CUDA nms copies its mask to the host and the kept indices back: one sync per call (two
    waits, as a trace charges them to the call) at the caller's line, none when there are no boxes, and no
    custom-op note (the catalogue says what it does)."""
    torchvision = pytest.importorskip("torchvision")
    with shadow_device() as shadow, watch() as guard:
        boxes = torch.tensor([[0.0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60]], device="cuda")
        scores = torch.tensor([0.9, 0.8, 0.7], device="cuda")
        keep = torchvision.ops.nms(boxes, scores, 0.5)
        torchvision.ops.nms(boxes[:0], scores[:0], 0.5)
    waits = [r for r in guard.violations if r.op == "torchvision::nms"]
    assert [r.rule for r in waits] == ["SH115"]
    assert {linecache.getline(r.file, r.line).strip() for r in waits} == {
        "return torch.ops.torchvision.nms(boxes, scores, iou_threshold)"}
    assert keep.is_cuda and keep.cpu().tolist() == [0, 2] and shadow.notes == ()
