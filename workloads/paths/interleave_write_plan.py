"""Page-interleave KV write plan: which tokens of a batch this rank stores, and where.

Mirrors sglang ``mem_cache/page_interleave_pool.py: PageInterleaveKVPoolMixin._get_write_plan`` and its use
in ``set_kv_buffer``/``set_mla_kv_buffer``: KV pages are striped over a shard group (logical slot
``loc = Q*(N*ps) + r*ps + o`` belongs to rank ``r`` at local row ``Q*ps + o``); once per batch the plan
``owned_idx = torch.nonzero(local_mask(loc)).squeeze(1)`` and ``local_rows = local_index(loc[owned_idx])``
is computed, then every layer writes ``cache_k.index_select(0, owned_idx)`` to ``local_rows`` (after an
``owned_idx.numel() == 0`` early return). It runs in the forward, launched from the scheduler thread.

Why the bad variant syncs: ``torch.nonzero`` sizes its output by the number of owned tokens, read back to
the host (``aten::nonzero``, rule SH103).

The rewrite: ``torch.nonzero_static(mask, size=len(loc), fill_value=0)`` gives a fixed-size plan whose
first ``count = mask.sum()`` entries are the owned positions (count stays on the device); padded entries
write their (arbitrary) source row to a trash row past the pool's local rows, like sglang's scratch trash
page. Every real row receives the same data; only the trash row differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths._common import check_params, paged_slots, random_pages, resolve_device, seeded


@dataclass
class InterleaveWritePlanParams:
    variant: str = "bad"
    device: str = "cpu"
    shard_size: int = 4
    shard_rank: int = 1
    page_size: int = 16
    groups: int = 512
    batch_tokens: int = 2048
    num_layers: int = 8
    kv_dim: int = 64
    seed: int = 0

    def __post_init__(self) -> None:
        check_params(self)


@dataclass
class InterleaveWritePlanState:
    params: InterleaveWritePlanParams
    loc: torch.Tensor
    positions: torch.Tensor
    cache_k: list[torch.Tensor]
    kv_buffers: list[torch.Tensor]
    trash_row: int


def owner_of(loc: torch.Tensor, page_size: int, shard_size: int) -> torch.Tensor:
    return (loc % (shard_size * page_size)) // page_size


def local_index(loc: torch.Tensor, page_size: int, shard_size: int) -> torch.Tensor:
    return (loc // (shard_size * page_size)) * page_size + loc % page_size


def setup(params: InterleaveWritePlanParams) -> InterleaveWritePlanState:
    if not 0 <= params.shard_rank < params.shard_size:
        raise ValueError(f"shard_rank {params.shard_rank} out of range for shard_size {params.shard_size}")
    device = resolve_device(params.device)
    generator = seeded(params.seed)
    logical_pages = params.groups * params.shard_size
    batch_pages = -(-params.batch_tokens // params.page_size)
    # The batch's out_cache_loc: tokens in (physical-size) pages scattered over all ranks' stripes.
    pages = random_pages(batch_pages, 1, logical_pages, generator)
    loc = paged_slots(params.batch_tokens, pages, params.page_size)
    local_rows = params.groups * params.page_size
    cache_k = [torch.randn(params.batch_tokens, params.kv_dim, generator=generator)
               for _ in range(params.num_layers)]
    return InterleaveWritePlanState(
        params=params,
        loc=loc.to(device),
        positions=torch.arange(params.batch_tokens, device=device),
        cache_k=[k.to(device) for k in cache_k],
        kv_buffers=[torch.zeros(local_rows + 1, params.kv_dim, device=device)
                    for _ in range(params.num_layers)],
        trash_row=local_rows,
    )


def write_plan_nonzero(state: InterleaveWritePlanState) -> tuple[torch.Tensor, torch.Tensor]:
    params = state.params
    mask = owner_of(state.loc, params.page_size, params.shard_size) == params.shard_rank
    owned_idx = torch.nonzero(mask).squeeze(1)
    return owned_idx, local_index(state.loc[owned_idx], params.page_size, params.shard_size)


def write_plan_static(state: InterleaveWritePlanState) -> tuple[torch.Tensor, torch.Tensor]:
    params = state.params
    mask = owner_of(state.loc, params.page_size, params.shard_size) == params.shard_rank
    owned_idx = torch.nonzero_static(mask, size=state.loc.numel(), fill_value=0).squeeze(1)
    count = mask.sum()
    rows = local_index(state.loc[owned_idx], params.page_size, params.shard_size)
    return owned_idx, torch.where(state.positions < count, rows, state.trash_row)


def step(state: InterleaveWritePlanState) -> list[torch.Tensor]:
    """Plan once for the batch, then write every layer's owned tokens; returns the real rows per layer."""
    if state.params.variant == "bad":
        owned_idx, local_rows = write_plan_nonzero(state)
        if owned_idx.numel() == 0:
            return [buffer[:state.trash_row] for buffer in state.kv_buffers]
    else:
        owned_idx, local_rows = write_plan_static(state)
    for cache_k, buffer in zip(state.cache_k, state.kv_buffers, strict=True):
        buffer.index_copy_(0, local_rows, cache_k.index_select(0, owned_idx))
    return [buffer[:state.trash_row] for buffer in state.kv_buffers]


WORKLOAD = Workload(
    name="interleave-write-plan",
    summary="Page-interleave KV write plan: torch.nonzero vs nonzero_static with a trash row",
    mirrors="sglang mem_cache/page_interleave_pool.py: PageInterleaveKVPoolMixin._get_write_plan",
    params=InterleaveWritePlanParams,
    setup=setup,
    step=step,
    expected_rules=("SH103",),
    small={"groups": 32, "batch_tokens": 200, "num_layers": 2, "kv_dim": 8, "page_size": 8},
)
