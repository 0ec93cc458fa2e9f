"""DCP index translation, pool sizing and registration of the hicache-dcp workload (as sglang tests them)."""

from __future__ import annotations

import dataclasses
import threading

import pytest
import torch

from synchunt_workloads.hicache_dcp import (
    WORKLOADS,
    CacheOperation,
    HiCacheController,
    HiCacheParams,
    MLATokenToKVPool,
    MLATokenToKVPoolHost,
    PagedTokenToKVPoolAllocator,
    maybe_dcp_kernel_indices,
    run_on_scheduler_thread,
)

IMPLS = ("masked", "sliced")
DCP = 8
WIDENED = 512  # physical page 64 × dcp 8


def pages(*page_ids: int, widened: int = WIDENED) -> torch.Tensor:
    return torch.cat([torch.arange(p * widened, (p + 1) * widened) for p in page_ids])


def reference_rows(indices: torch.Tensor, dcp_size: int, rank: int) -> list[int]:
    """The ownership rule spelled out in Python: rank ``s % dcp`` stores slot ``s`` at row ``s // dcp``."""
    return [slot // dcp_size for slot in indices.tolist() if slot % dcp_size == rank]


def small_pools(dcp_size: int = DCP, rank: int = 0) -> tuple[MLATokenToKVPool, MLATokenToKVPoolHost]:
    device_pool = MLATokenToKVPool(4 * 64, 64, 2, 16, torch.bfloat16, torch.device("cpu"))
    host_pool = MLATokenToKVPoolHost(device_pool, 2 * 64, 64 * dcp_size, dcp_size=dcp_size, dcp_rank=rank)
    return device_pool, host_pool


# --- translation ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("impl", IMPLS)
def test_without_dcp_the_same_tensor_object_comes_back(impl: str) -> None:
    indices = pages(3, 1, widened=64)
    assert maybe_dcp_kernel_indices(indices, 1, 0, impl) is indices


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("rank", range(DCP))
def test_one_aligned_widened_page_maps_to_one_physical_page_on_every_rank(impl: str, rank: int) -> None:
    local = maybe_dcp_kernel_indices(torch.arange(512, 1024), DCP, rank, impl)
    assert local.tolist() == list(range(64, 128))


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("rank", range(DCP))
def test_merged_unordered_pages_equal_the_mask_reference(impl: str, rank: int) -> None:
    indices = pages(3, 0, 5)
    local = maybe_dcp_kernel_indices(indices, DCP, rank, impl)
    assert local.tolist() == reference_rows(indices, DCP, rank)
    assert local.tolist()[:64] == list(range(3 * 64, 4 * 64))  # page order is kept


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("rank", [0, 1, 7])
def test_a_ragged_run_is_rejected(impl: str, rank: int) -> None:
    with pytest.raises(ValueError):
        maybe_dcp_kernel_indices(torch.arange(512, 1025), DCP, rank, impl)


def test_an_unknown_translation_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown DCP index translation"):
        maybe_dcp_kernel_indices(pages(1), DCP, 0, "gathered")


@pytest.mark.parametrize("rank", range(DCP))
def test_residue_pairing_survives_the_direct_backends_host_sort(rank: int) -> None:
    device_pool, host_pool = small_pools(rank=rank)
    allocator = PagedTokenToKVPoolAllocator(device_pool.size, 64, DCP, device_pool.device)
    controller = HiCacheController(allocator, host_pool, device_pool, io_backend="direct")
    host = pages(1, 0)
    device = pages(4, 2)
    op = CacheOperation.merge_ops([CacheOperation(host[:512], device[:512]),
                                   CacheOperation(host[512:], device[512:])])
    sorted_host, permuted_device = controller.move_indices(op)

    assert sorted_host.tolist() == sorted(host.tolist())
    assert torch.equal(sorted_host % DCP, permuted_device % DCP)
    pairs = zip(host.tolist(), device.tolist(), strict=True)
    expected = {h // DCP: d // DCP for h, d in pairs if h % DCP == rank}
    for impl in IMPLS:
        host_rows = maybe_dcp_kernel_indices(sorted_host, DCP, rank, impl).tolist()
        device_rows = maybe_dcp_kernel_indices(permuted_device, DCP, rank, impl).tolist()
        assert dict(zip(host_rows, device_rows, strict=True)) == expected


# --- sizing ---------------------------------------------------------------------------------------------
def test_host_pool_is_physical_in_rows_and_logical_in_bookkeeping() -> None:
    _, host_pool = small_pools()
    assert (host_pool.size, host_pool.page_size) == (128, 64)
    assert tuple(host_pool.kv_buffer.shape) == (2, 128, 1, 16)
    assert (host_pool.logical_size, host_pool.logical_page_size) == (1024, 512)
    assert host_pool.free_slots.numel() == host_pool.mem_state.numel() == 1024
    assert host_pool.free_slots.device.type == host_pool.mem_state.device.type == "cpu"


def test_host_allocation_is_in_whole_widened_pages_only() -> None:
    _, host_pool = small_pools()
    for partial in (64, 256, 513):
        with pytest.raises(ValueError, match="whole widened pages"):
            host_pool.alloc(partial)
    first = host_pool.alloc(512)
    assert first is not None and first.tolist() == list(range(512))
    assert host_pool.alloc(1024) is None  # only one widened page left
    assert host_pool.alloc(512) is not None
    assert host_pool.available_size() == 0


def test_host_pool_rejects_a_page_that_does_not_divide_among_ranks() -> None:
    device_pool, _ = small_pools()
    with pytest.raises(ValueError, match="multiple of dcp_size"):
        MLATokenToKVPoolHost(device_pool, 128, 100, dcp_size=DCP)


def test_device_pool_pads_page_zero_and_allocates_whole_widened_pages() -> None:
    device_pool, _ = small_pools()
    assert all(tuple(buffer.shape) == (256 + 64, 1, 16) for buffer in device_pool.kv_buffer)
    allocator = PagedTokenToKVPoolAllocator(device_pool.size, 64, DCP, device_pool.device,
                                            generator=torch.Generator().manual_seed(1))
    with pytest.raises(ValueError, match="whole widened pages"):
        allocator.alloc(64)
    slots = allocator.alloc(4 * 512)
    assert slots is not None and allocator.alloc(512) is None
    rows = maybe_dcp_kernel_indices(slots, DCP, 3, "sliced")
    assert sorted(rows.tolist()) == list(range(64, 64 + 256))  # never the padding page, never past the end


# --- registration ---------------------------------------------------------------------------------------
def test_the_workload_is_registered_with_simple_options() -> None:
    (workload,) = WORKLOADS
    assert workload.name == "hicache-dcp"
    assert workload.params is HiCacheParams
    assert dict(workload.variants) == {"bad": "masked", "fixed": "sliced"}
    assert workload.expected_rules == ("SH101",)
    defaults = HiCacheParams()
    assert (defaults.layers, defaults.kv_dim, defaults.dtype) == (27, 576, "bfloat16")
    assert (defaults.dcp_size, defaults.page_size, defaults.widened_page_size) == (8, 64, 512)
    for option in dataclasses.fields(HiCacheParams):
        assert isinstance(getattr(defaults, option.name), (int, str, bool, float)), option.name
    small = workload.make_params(small=True)
    assert small.layers == 4 and small.impl == "masked"


@pytest.mark.parametrize("bad", [{"impl": "gathered"}, {"backend": "uva"}, {"dcp_rank": 8},
                                 {"dtype": "bfloat17"}, {"load_pages": 20}])
def test_bad_options_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        HiCacheParams(**bad)


def test_run_on_scheduler_thread_names_the_thread_and_hands_errors_back() -> None:
    assert run_on_scheduler_thread(lambda: threading.current_thread().name) == "scheduler"

    def fail() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        run_on_scheduler_thread(fail)
