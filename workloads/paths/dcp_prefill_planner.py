"""DCP prefill metadata planner: this rank's share of the cached prefix.

Mirrors sglang ``layers/dcp/planner.py: prepare_decode_context_parallel_metadata``, run on the scheduler
thread while a prefill (extend) batch is planned under decode context parallelism: it gathers every
request's cached prefix slots from ``req_to_token`` into one flat tensor (a Triton kernel in sglang, a
``repeat_interleave`` + gather here), keeps the slots this rank owns, translates them to physical rows
(``slot // dcp_size``) and builds the kv ``indptr``.

Why the bad variant syncs: the earlier form selected the owned slots with
``dcp_prefix_kv_indices[dcp_prefix_kv_indices % dcp_size == dcp_rank]``; the boolean mask makes
``aten::index`` call ``aten::nonzero``, which reads the count back to the host (rule SH101).

The rewrite (what sglang ships): prefix lengths come from the radix cache in whole widened pages, so each
request's prefix is a multiple of ``dcp_size`` long and starts page-aligned; the concatenation keeps slot
residues in lockstep with positions, and ``dcp_prefix_kv_indices[dcp_rank::dcp_size]`` selects exactly the
owned slots. The gather uses ``repeat_interleave`` with ``output_size`` (the host knows the prefix total
from ``extend_prefix_lens_cpu``), so it stays sync-free in both variants.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths._common import check_params, paged_slots, random_pages, resolve_device, seeded


@dataclass
class DcpPrefillPlannerParams:
    variant: str = "bad"
    device: str = "cpu"
    dcp_size: int = 8
    dcp_rank: int = 5
    page_size: int = 16
    batch_size: int = 16
    max_prefix_pages: int = 6
    max_extend_len: int = 200
    seed: int = 0

    def __post_init__(self) -> None:
        check_params(self)


@dataclass
class DcpPrefillPlannerState:
    params: DcpPrefillPlannerParams
    req_to_token: torch.Tensor
    req_pool_indices: torch.Tensor
    extend_prefix_lens: torch.Tensor
    extend_prefix_lens_cpu: list[int]
    seq_lens: torch.Tensor
    batch_ids: torch.Tensor


@dataclass(frozen=True)
class PrefillDcpPlan:
    dcp_local_prefix_kv_indices: torch.Tensor
    dcp_kv_indptr: torch.Tensor
    dcp_extend_prefix_lens_sum: int


def setup(params: DcpPrefillPlannerParams) -> DcpPrefillPlannerState:
    if not 0 <= params.dcp_rank < params.dcp_size:
        raise ValueError(f"dcp_rank {params.dcp_rank} out of range for dcp_size {params.dcp_size}")
    device = resolve_device(params.device)
    generator = seeded(params.seed)
    widened = params.page_size * params.dcp_size
    size = params.batch_size
    prefix_pages = torch.randint(0, params.max_prefix_pages + 1, (size,), generator=generator)
    prefix_lens = prefix_pages * widened
    extend_lens = torch.randint(1, params.max_extend_len + 1, (size,), generator=generator)
    seq_lens = prefix_lens + extend_lens
    max_context = int(seq_lens.max())
    pool_rows = 2 * size  # the request pool is larger than the batch; rows are picked at random
    req_pool_indices = random_pages(size, 0, pool_rows, generator)
    req_to_token = torch.zeros(pool_rows, max_context, dtype=torch.int32)
    pages_needed = [-(-int(length) // widened) for length in seq_lens]
    pages = random_pages(sum(pages_needed), 1, sum(pages_needed) + 1 + size, generator)
    start = 0
    for row, length, count in zip(req_pool_indices.tolist(), seq_lens.tolist(), pages_needed, strict=True):
        req_to_token[row, :length] = paged_slots(length, pages[start:start + count], widened).to(torch.int32)
        start += count
    return DcpPrefillPlannerState(
        params=params,
        req_to_token=req_to_token.to(device),
        req_pool_indices=req_pool_indices.to(device),
        extend_prefix_lens=prefix_lens.to(torch.int32).to(device),
        extend_prefix_lens_cpu=prefix_lens.tolist(),
        seq_lens=seq_lens.to(torch.int32).to(device),
        batch_ids=torch.arange(size, device=device),
    )


def gather_prefix_kv_indices(state: DcpPrefillPlannerState, total: int) -> torch.Tensor:
    """Every request's prefix slots, concatenated (sglang's create_chunked_prefix_cache_kv_indices)."""
    owner = torch.repeat_interleave(state.batch_ids, state.extend_prefix_lens, output_size=total)
    cu_prefix = torch.cumsum(state.extend_prefix_lens, dim=0) - state.extend_prefix_lens
    position = torch.arange(total, device=owner.device) - cu_prefix[owner]
    return state.req_to_token[state.req_pool_indices[owner], position]


def step(state: DcpPrefillPlannerState) -> PrefillDcpPlan:
    params = state.params
    prefix_total = sum(state.extend_prefix_lens_cpu)
    prefix_kv_indices = gather_prefix_kv_indices(state, prefix_total)
    if params.variant == "bad":
        owned = prefix_kv_indices[prefix_kv_indices % params.dcp_size == params.dcp_rank]
    else:
        # Prefix lengths are whole widened pages, so residues follow positions across the concatenation.
        owned = prefix_kv_indices[params.dcp_rank::params.dcp_size]
    dcp_kv_indptr = torch.zeros(params.batch_size + 1, dtype=torch.int32, device=state.seq_lens.device)
    dcp_kv_indptr[1:] = torch.cumsum(state.seq_lens, dim=0)
    return PrefillDcpPlan(dcp_local_prefix_kv_indices=owned // params.dcp_size, dcp_kv_indptr=dcp_kv_indptr,
                          dcp_extend_prefix_lens_sum=prefix_total)


WORKLOAD = Workload(
    name="dcp-prefill-planner",
    summary="DCP prefill planner: this rank's prefix slots by boolean mask vs by stride",
    mirrors="sglang layers/dcp/planner.py: prepare_decode_context_parallel_metadata",
    params=DcpPrefillPlannerParams,
    setup=setup,
    step=step,
    expected_rules=("SH101",),
    small={"batch_size": 4, "max_prefix_pages": 3, "max_extend_len": 40, "dcp_size": 4, "dcp_rank": 2},
)
