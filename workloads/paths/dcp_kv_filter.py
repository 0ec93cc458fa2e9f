"""DCP local KV index filter, once per layer.

Mirrors sglang ``layers/dcp/layout.py: filter_dcp_local_kv_indices``, called from the DeepSeek MHA path
(``_get_mla_kv_buffer_from_fp8_for_dsa`` on ROCm) in every layer's forward: the batch's flattened page table
(widened logical slots) is reduced to the slots this decode-context-parallel rank owns, translated to physical
rows (``slot // dcp_size``) and gathered from the layer's latent KV buffer.

Why the bad variant syncs: ``kv_indices[kv_indices % dcp_size == dcp_rank]`` indexes with a boolean mask;
``aten::index`` calls ``aten::nonzero``, which copies the count of owned slots to the host (rule SH101) —
once per layer, on the forward thread.

The rewrite (the one sglang uses for the chunked twin, ``filter_dcp_local_chunk_kv_indices``): each
request's kv row starts at token 0 of a widened page (``page_size * dcp_size`` logical slots), so a token
at position ``p`` sits at a slot with ``slot % dcp_size == p % dcp_size``. The owned slots of a request are
therefore the strided slice ``row[(rank - 0) % dcp_size::dcp_size]``; the per-request lengths are host
values (``seq_lens_cpu``), so the slice bounds need no device read. Identical output, no ``nonzero``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths._common import check_params, paged_slots, random_pages, resolve_device, seeded


@dataclass
class DcpKvFilterParams:
    variant: str = "bad"
    device: str = "cpu"
    dcp_size: int = 8
    dcp_rank: int = 3
    page_size: int = 16
    batch_size: int = 8
    max_seq_len: int = 700
    num_layers: int = 8
    kv_dim: int = 64
    seed: int = 0

    def __post_init__(self) -> None:
        check_params(self)


@dataclass
class DcpKvFilterState:
    params: DcpKvFilterParams
    kv_indices: torch.Tensor
    seq_lens_cpu: list[int]
    kv_buffers: list[torch.Tensor]


def setup(params: DcpKvFilterParams) -> DcpKvFilterState:
    if not 0 <= params.dcp_rank < params.dcp_size:
        raise ValueError(f"dcp_rank {params.dcp_rank} out of range for dcp_size {params.dcp_size}")
    device = resolve_device(params.device)
    generator = seeded(params.seed)
    widened = params.page_size * params.dcp_size
    seq_lens = torch.randint(1, params.max_seq_len + 1, (params.batch_size,), generator=generator).tolist()
    pages_needed = [-(-length // widened) for length in seq_lens]
    # Widened page 0 is the padding page; requests get pages from the rest, in fragmented order.
    pages = random_pages(sum(pages_needed), 1, sum(pages_needed) + 1 + params.batch_size, generator)
    rows, start = [], 0
    for length, count in zip(seq_lens, pages_needed, strict=True):
        rows.append(paged_slots(length, pages[start:start + count], widened))
        start += count
    kv_indices = torch.cat(rows)
    physical_rows = (int(pages.max()) + 1) * params.page_size
    kv_buffers = [torch.randn(physical_rows, 1, params.kv_dim, generator=generator).to(torch.bfloat16)
                  for _ in range(params.num_layers)]
    return DcpKvFilterState(params=params, kv_indices=kv_indices.to(device), seq_lens_cpu=seq_lens,
                            kv_buffers=[buffer.to(device) for buffer in kv_buffers])


def filter_local_by_mask(kv_indices: torch.Tensor, dcp_size: int, dcp_rank: int) -> torch.Tensor:
    return kv_indices[kv_indices % dcp_size == dcp_rank]


def filter_local_by_stride(kv_indices: torch.Tensor, seq_lens_cpu: list[int], dcp_size: int,
                           dcp_rank: int) -> torch.Tensor:
    parts, offset = [], 0
    for length in seq_lens_cpu:
        # Every row starts at token 0 of a widened page, so token p's slot has residue p % dcp_size.
        parts.append(kv_indices[offset + dcp_rank:offset + length:dcp_size])
        offset += length
    return torch.cat(parts)


@dataclass(frozen=True)
class FilteredReads:
    """This rank's widened slots (the filter's output, the same in every layer) and each layer's rows."""

    local_slots: torch.Tensor
    gathered: list[torch.Tensor]


def step(state: DcpKvFilterState) -> FilteredReads:
    """Every layer filters the page table to this rank's slots and gathers its latent KV rows."""
    params = state.params
    gathered, local = [], state.kv_indices[:0]
    for layer in range(params.num_layers):
        if params.variant == "bad":
            local = filter_local_by_mask(state.kv_indices, params.dcp_size, params.dcp_rank)
        else:
            local = filter_local_by_stride(state.kv_indices, state.seq_lens_cpu, params.dcp_size,
                                           params.dcp_rank)
        rows = local // params.dcp_size  # translate_dcp_read_ids
        gathered.append(state.kv_buffers[layer].index_select(0, rows))
    return FilteredReads(local_slots=local, gathered=gathered)


WORKLOAD = Workload(
    name="dcp-kv-filter",
    summary="Per-layer DCP filter of the batch's KV indices: boolean mask vs per-request stride",
    mirrors="sglang layers/dcp/layout.py: filter_dcp_local_kv_indices",
    params=DcpKvFilterParams,
    setup=setup,
    step=step,
    expected_rules=("SH101",),
    small={"batch_size": 3, "max_seq_len": 300, "num_layers": 2, "kv_dim": 16, "dcp_size": 4, "dcp_rank": 1},
)
