"""The hicache-dcp load really moves the bytes: device rows hold exactly the loaded host rows, and back."""

from __future__ import annotations

import pytest
import torch

from synchunt_workloads.hicache_dcp import (
    WORKLOADS,
    HiCacheController,
    MLATokenToKVPool,
    MLATokenToKVPoolHost,
    PagedTokenToKVPoolAllocator,
    setup,
    step,
)

(WORKLOAD,) = WORKLOADS
BACKENDS = ("kernel", "direct")
TRANSLATIONS = [("masked", 8), ("sliced", 8), ("masked", 1), ("sliced", 1)]
RANKED = [(impl, dcp, rank) for impl, dcp in TRANSLATIONS for rank in sorted({0, min(5, dcp - 1)})]


def rows_of(indices: torch.Tensor, dcp_size: int, rank: int) -> torch.Tensor:
    """Reference: this rank's physical rows of ``indices``, in order, computed slot by slot."""
    return torch.tensor([slot // dcp_size for slot in indices.tolist() if slot % dcp_size == rank])


def untouched_rows(total: int, touched: torch.Tensor) -> torch.Tensor:
    keep = torch.ones(total, dtype=torch.bool)
    keep[touched] = False
    return keep


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("impl", "dcp_size", "rank"), RANKED)
def test_every_layer_holds_exactly_the_loaded_host_rows(backend: str, impl: str, dcp_size: int,
                                                        rank: int) -> None:
    state = setup(WORKLOAD.make_params({"impl": impl, "backend": backend, "dcp_size": dcp_size,
                                        "dcp_rank": rank}, small=True))
    checksums = step(state)

    host_rows = rows_of(state.host_indices, dcp_size, rank)
    device_rows = rows_of(state.device_indices, dcp_size, rank)
    assert len(host_rows) == state.params.load_pages * state.params.page_size
    assert torch.equal(device_rows, state.forward_rows)
    rest = untouched_rows(state.device_pool.kv_buffer[0].shape[0], device_rows)
    for layer in range(state.params.layers):
        loaded = state.device_pool.get_key_buffer(layer)
        expected = state.host_pool.kv_buffer[layer][host_rows]
        assert torch.equal(loaded[device_rows], expected)
        assert not loaded[rest].any()  # nothing else written, padding page included
        assert torch.equal(checksums[layer], expected.float().sum())


@pytest.mark.parametrize("backend", BACKENDS)
def test_masked_and_sliced_fill_identical_device_buffers(backend: str) -> None:
    buffers = {}
    for impl in ("masked", "sliced"):
        state = setup(WORKLOAD.make_params({"impl": impl, "backend": backend, "dcp_rank": 3}, small=True))
        step(state)
        buffers[impl] = torch.stack(state.device_pool.kv_buffer)
    assert buffers["masked"].any()
    assert torch.equal(buffers["masked"], buffers["sliced"])


def test_step_repeats_on_one_state_and_rotates_event_sets() -> None:
    state = setup(WORKLOAD.make_params(small=True))
    first = step(state)
    producers = []
    for _ in range(4):
        assert torch.equal(step(state), first)
        producers.append(state.controller.layer_done_counter.producer_index)
        assert state.controller.load_queue == []
    assert producers == [1, 2, 0, 1]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("impl", "dcp_size"), TRANSLATIONS)
def test_backup_writes_back_exactly(backend: str, impl: str, dcp_size: int) -> None:
    rank = dcp_size - 1
    state = setup(WORKLOAD.make_params({"impl": impl, "backend": backend, "dcp_size": dcp_size,
                                        "dcp_rank": rank}, small=True))
    step(state)
    host_rows = rows_of(state.host_indices, dcp_size, rank)
    device_rows = rows_of(state.device_indices, dcp_size, rank)
    before = state.host_pool.kv_buffer.clone()
    generator = torch.Generator().manual_seed(7)
    for buffer in state.device_pool.kv_buffer:  # the forward's writes, to be backed up
        buffer[device_rows] = torch.randn(buffer[device_rows].shape, generator=generator).to(buffer.dtype)

    state.controller.write_backup(state.host_indices, state.device_indices)

    rest = untouched_rows(state.host_pool.size, host_rows)
    for layer in range(state.params.layers):
        host = state.host_pool.kv_buffer[layer]
        assert torch.equal(host[host_rows], state.device_pool.kv_buffer[layer][device_rows])
        assert torch.equal(host[rest], before[layer][rest])


@pytest.mark.parametrize("impl", ["masked", "sliced"])
def test_a_device_mirror_of_the_host_pool_stays_coherent(impl: str) -> None:
    """The accelerator layout (kernel backend reads a device copy of the host pool), exercised on CPU."""
    cpu = torch.device("cpu")
    device_pool = MLATokenToKVPool(3 * 8, 8, 2, 32, torch.bfloat16, cpu)
    host_pool = MLATokenToKVPoolHost(device_pool, 4 * 8, 8 * 4, dcp_size=4, dcp_rank=2, dcp_impl=impl,
                                     mirror_on_device=True)
    assert host_pool.device_mirror is not host_pool.kv_buffer
    values = torch.randn(2, 32, 1, 32, generator=torch.Generator().manual_seed(3))
    host_pool.write_rows(torch.arange(32), values)
    controller = HiCacheController(PagedTokenToKVPoolAllocator(24, 8, 4, cpu), host_pool, device_pool)
    host_indices = torch.cat([torch.arange(3 * 32, 4 * 32), torch.arange(0, 32)])
    device_indices = controller.load(host_indices)
    assert device_indices is not None
    controller.layer_done_counter.set_consumer(controller.start_loading())

    host_rows, device_rows = rows_of(host_indices, 4, 2), rows_of(device_indices, 4, 2)
    for layer in range(2):
        loaded = device_pool.get_key_buffer(layer)
        assert torch.equal(loaded[device_rows], host_pool.kv_buffer[layer][host_rows])

    for buffer in device_pool.kv_buffer:
        buffer[device_rows] = -buffer[device_rows]
    controller.write_backup(host_indices, device_indices)
    for layer in range(2):
        assert torch.equal(host_pool.kv_buffer[layer][host_rows], device_pool.kv_buffer[layer][device_rows])
        assert torch.equal(host_pool.device_mirror[layer], host_pool.kv_buffer[layer])
