"""Every audit path: the ``fixed`` variant computes exactly what the ``bad`` one does, and both are right."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths import WORKLOADS
from synchunt_workloads.paths.host_pool_free import HostSlotState
from synchunt_workloads.paths.move_indices import StagedIndices
from synchunt_workloads.paths.multi_ended_free import StalePageError

BY_NAME = {workload.name: workload for workload in WORKLOADS}


def canonical(result: Any) -> Any:
    """A comparable form of a step's result: tensors stay tensors, containers are walked."""
    if isinstance(result, StagedIndices):
        return canonical(result.resolve())
    if isinstance(result, HostSlotState):
        return (result.slot_used_cpu.clone(), torch.cat(result.release_slots), result.num_release_slots)
    if isinstance(result, torch.Tensor):
        # a 0-dim bool stands for a flag the bad variant returns as a Python bool
        return bool(result) if result.dim() == 0 and result.dtype == torch.bool else result.clone()
    if dataclasses.is_dataclass(result):
        return tuple(canonical(getattr(result, f.name)) for f in dataclasses.fields(result))
    if isinstance(result, (list, tuple)):
        return tuple(canonical(item) for item in result)
    return result


def assert_same(left: Any, right: Any, where: str = "result") -> None:
    if isinstance(left, torch.Tensor):
        assert isinstance(right, torch.Tensor), where
        assert left.dtype == right.dtype and left.shape == right.shape, where
        assert torch.equal(left, right), where
    elif isinstance(left, tuple):
        assert isinstance(right, tuple) and len(left) == len(right), where
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            assert_same(a, b, f"{where}[{index}]")
    else:
        assert left == right, where


def run_variant(workload: Workload, variant: str, overrides: dict[str, Any], small: bool) -> Any:
    params = workload.make_params({**overrides, "variant": variant}, small=small)
    state = workload.setup(params)
    first = canonical(workload.step(state))
    again = canonical(workload.step(state))
    assert_same(first, again, f"{workload.name}/{variant} repeated step")
    return first


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("small", [True, False], ids=["small", "default"])
def test_fixed_matches_bad(workload: Workload, seed: int, small: bool) -> None:
    bad = run_variant(workload, "bad", {"seed": seed}, small)
    fixed = run_variant(workload, "fixed", {"seed": seed}, small)
    assert_same(bad, fixed, workload.name)


# Ground truth, computed independently of both variants, so that agreeing on a wrong answer fails too.

def check_dcp_kv_filter(workload: Workload, seed: int) -> None:
    params = workload.make_params({"seed": seed, "variant": "fixed"}, small=True)
    state = workload.setup(params)
    slots = [slot for slot in state.kv_indices.tolist() if slot % params.dcp_size == params.dcp_rank]
    rows = torch.tensor(slots, dtype=torch.int64) // params.dcp_size
    reads = workload.step(state)
    assert reads.local_slots.tolist() == slots
    for layer, gathered in enumerate(reads.gathered):
        assert torch.equal(gathered, state.kv_buffers[layer][rows])


def check_dcp_prefill_planner(workload: Workload, seed: int) -> None:
    params = workload.make_params({"seed": seed, "variant": "fixed"}, small=True)
    state = workload.setup(params)
    expected: list[int] = []
    for row, length in zip(state.req_pool_indices.tolist(), state.extend_prefix_lens_cpu, strict=True):
        expected += [s // params.dcp_size for s in state.req_to_token[row, :length].tolist()
                     if s % params.dcp_size == params.dcp_rank]
    plan = workload.step(state)
    assert plan.dcp_local_prefix_kv_indices.tolist() == expected
    assert plan.dcp_kv_indptr.tolist() == [0, *torch.cumsum(state.seq_lens, 0).tolist()]


def check_move_indices(workload: Workload, seed: int) -> None:
    state = workload.setup(workload.make_params({"seed": seed, "variant": "fixed"}, small=True))
    host, device = workload.step(state).resolve()
    pairs = sorted(zip(state.host_indices.tolist(), state.device_indices.tolist(), strict=True))
    assert list(zip(host.tolist(), device.tolist(), strict=True)) == pairs


def check_host_pool_free(workload: Workload, seed: int) -> None:
    state = workload.setup(workload.make_params({"seed": seed, "variant": "fixed"}, small=True))
    slots = workload.step(state)
    assert not bool(slots.slot_used_cpu.any())  # every allocated slot was this operation's
    assert slots.num_release_slots == state.host_indices_cpu.numel()


def check_paged_free(workload: Workload, seed: int) -> None:
    params = workload.make_params({"seed": seed, "variant": "fixed"}, small=True)
    state = workload.setup(params)
    freed = workload.step(state)
    request_pages = {slot // params.page_size for slot in state.free_index.tolist()}
    assert freed.tolist() == sorted(set(state.initial_free_pages.tolist()) | request_pages)
    assert freed.tolist() == list(range(1, params.num_pages + 1))


def check_multi_ended_free(workload: Workload, seed: int) -> None:
    params = workload.make_params({"seed": seed, "variant": "fixed"}, small=True)
    state = workload.setup(params)
    pages = sorted({slot // params.page_size for slot in state.free_index.tolist()})
    outcome = workload.step(state)
    assert set(outcome.free_virtual_ids.tolist()) == set(state.initial_free_virtual_ids.tolist()) | set(pages)
    physical = state.initial_virtual_to_physical[pages]
    assert outcome.pending_physical_pages.tolist() == sorted(physical.tolist())
    assert not bool(outcome.virtual_to_physical[pages].ge(0).any())
    assert not bool(outcome.stale_flag)


def check_interleave_write_plan(workload: Workload, seed: int) -> None:
    params = workload.make_params({"seed": seed, "variant": "fixed"}, small=True)
    state = workload.setup(params)
    buffers = workload.step(state)
    span = params.shard_size * params.page_size
    written = 0
    for position, loc in enumerate(state.loc.tolist()):
        if (loc % span) // params.page_size == params.shard_rank:
            row = (loc // span) * params.page_size + loc % params.page_size
            for layer, buffer in enumerate(buffers):
                assert torch.equal(buffer[row], state.cache_k[layer][position])
            written += 1
    assert written > 0
    assert sum(int(buffer.any(dim=1).sum()) for buffer in buffers) == written * params.num_layers


def check_ngram_table_update(workload: Workload, seed: int) -> None:
    state = workload.setup(workload.make_params({"seed": seed, "variant": "fixed"}, small=True))
    expected = state.initial_table.clone()
    for row, column, token, skip in zip(state.req_pool_indices.tolist(), state.seq_lens.tolist(),
                                        state.next_token_ids.tolist(),
                                        state.skip_token_table_update.tolist(), strict=True):
        if not skip:
            expected[row, column] = token
    table, updated = workload.step(state)
    assert torch.equal(table, expected)
    assert bool(updated)


def check_hisparse_request_finished(workload: Workload, seed: int) -> None:
    params = workload.make_params({"seed": seed, "variant": "fixed"}, small=True)
    state = workload.setup(params)
    request_locs = state.initial_token_locs[:, state.req_pool_idx, :state.current_cap]
    owned = {loc for loc in request_locs.flatten().tolist() if loc >= params.page_size}
    before = state.initial_free_slots[:params.buffer_slots]
    free_slots, token_locs = workload.step(state)
    expected = before.clone()
    expected[sorted(owned)] = True
    assert torch.equal(free_slots, expected)
    assert bool((token_locs[:, state.req_pool_idx] == -1).all())


GROUND_TRUTH: dict[str, Callable[[Workload, int], None]] = {
    "dcp-kv-filter": check_dcp_kv_filter,
    "dcp-prefill-planner": check_dcp_prefill_planner,
    "move-indices-direct": check_move_indices,
    "host-pool-free": check_host_pool_free,
    "paged-allocator-free": check_paged_free,
    "multi-ended-free": check_multi_ended_free,
    "interleave-write-plan": check_interleave_write_plan,
    "ngram-table-update": check_ngram_table_update,
    "hisparse-request-finished": check_hisparse_request_finished,
}


def test_every_path_has_a_ground_truth_check() -> None:
    assert set(GROUND_TRUTH) == set(BY_NAME)


@pytest.mark.parametrize("name", sorted(GROUND_TRUTH))
@pytest.mark.parametrize("seed", [0, 3])
def test_fixed_variant_is_right(name: str, seed: int) -> None:
    GROUND_TRUTH[name](BY_NAME[name], seed)


# Edge cases each rewrite must keep.

def test_multi_ended_stale_free_raises_in_bad_and_flags_in_fixed() -> None:
    workload = BY_NAME["multi-ended-free"]
    bad_state = workload.setup(workload.make_params({"variant": "bad", "stale_pages": 2}, small=True))
    with pytest.raises(StalePageError):
        workload.step(bad_state)
    fixed_state = workload.setup(workload.make_params({"variant": "fixed", "stale_pages": 2}, small=True))
    assert bool(workload.step(fixed_state).stale_flag)


@pytest.mark.parametrize("skipped", [0, 8])
def test_ngram_update_with_nothing_or_everything_skipped(skipped: int) -> None:
    workload = BY_NAME["ngram-table-update"]
    bad = run_variant(workload, "bad", {"skipped": skipped}, small=True)
    fixed = run_variant(workload, "fixed", {"skipped": skipped}, small=True)
    assert_same(bad, fixed)
    assert bad[1] is (skipped < 8)


@pytest.mark.parametrize("dcp_rank", [0, 3])
def test_dcp_kv_filter_with_one_token_rows(dcp_rank: int) -> None:
    # Rows of one token: rank 0 owns each row's only token, the others own nothing; a stride over the whole
    # batch instead of per row would take only every fourth row's token.
    workload = BY_NAME["dcp-kv-filter"]
    overrides = {"max_seq_len": 1, "dcp_rank": dcp_rank, "dcp_size": 4, "batch_size": 8}
    bad = run_variant(workload, "bad", overrides, small=True)
    fixed = run_variant(workload, "fixed", overrides, small=True)
    assert_same(bad, fixed)
    local_slots = fixed[0]
    assert local_slots.numel() == (8 if dcp_rank == 0 else 0)


def test_prefill_planner_with_no_cached_prefix() -> None:
    workload = BY_NAME["dcp-prefill-planner"]
    bad = run_variant(workload, "bad", {"max_prefix_pages": 0}, small=True)
    fixed = run_variant(workload, "fixed", {"max_prefix_pages": 0}, small=True)
    assert_same(bad, fixed)
    assert fixed[0].numel() == 0


def test_paged_free_segment_rejects_unaligned_start() -> None:
    workload = BY_NAME["paged-allocator-free"]
    state = workload.setup(workload.make_params({"variant": "fixed"}, small=True))
    with pytest.raises(ValueError, match="page-aligned"):
        state.allocator.free_segment(state.free_index, start_pos=3)


def test_host_pool_detects_double_free() -> None:
    workload = BY_NAME["host-pool-free"]
    state = workload.setup(workload.make_params({"variant": "fixed", "check_double_free": True}, small=True))
    workload.step(state)
    with pytest.raises(RuntimeError, match="double free"):
        state.slots.release(state.host_indices_cpu)
