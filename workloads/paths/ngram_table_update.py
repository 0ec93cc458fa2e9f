"""N-gram embedding token table update after sampling.

Mirrors sglang ``model_executor/model_runner_components/ngram_embedding_manager.py:
update_ngram_token_table_after_sampling``: after every decode step the sampled token of each request is
written into its row of the n-gram token table at column ``seq_len``. When the batch holds a chunked
(not-yet-finished) prefill request, ``skip_token_table_update`` marks it, and the function selects the other
rows with ``(~skip).nonzero(as_tuple=True)[0]``, returns early if ``indices.numel() == 0``, and writes the
selected rows (``update_token_table`` with ``req_lens`` of ones).

Why the bad variant syncs: ``.nonzero()`` sizes its output by the number of rows to update, read back to
the host (``aten::nonzero``, rule SH103), on the forward path after sampling.

The rewrite stays dense: every row is written, skipped rows write back the value already in the table
(``torch.where(keep, token, current)``; in sglang's kernel terms, ``req_lens = (~skip).int()`` so skipped
rows write zero tokens). The table is identical; "was anything updated" is returned as a device boolean
instead of a Python bool (sglang's only caller ignores it).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths._common import check_params, random_pages, resolve_device, seeded


@dataclass
class NgramTableUpdateParams:
    variant: str = "bad"
    device: str = "cpu"
    batch_size: int = 64
    pool_rows: int = 256
    context_len: int = 4096
    vocab_size: int = 32000
    skipped: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        check_params(self)


@dataclass
class NgramTableUpdateState:
    params: NgramTableUpdateParams
    initial_table: torch.Tensor
    token_table: torch.Tensor
    next_token_ids: torch.Tensor
    req_pool_indices: torch.Tensor
    seq_lens: torch.Tensor
    skip_token_table_update: torch.Tensor


def setup(params: NgramTableUpdateParams) -> NgramTableUpdateState:
    if not 0 <= params.skipped <= params.batch_size:
        raise ValueError(f"skipped must be within 0..{params.batch_size}")
    device = resolve_device(params.device)
    generator = seeded(params.seed)
    table = torch.randint(0, params.vocab_size, (params.pool_rows, params.context_len), generator=generator,
                          dtype=torch.int32)
    skip = torch.zeros(params.batch_size, dtype=torch.bool)
    skip[random_pages(params.skipped, 0, params.batch_size, generator)] = True
    return NgramTableUpdateState(
        params=params,
        initial_table=table.to(device),
        token_table=table.to(device).clone(),  # .to is a no-op on the CPU: keep the two apart
        next_token_ids=torch.randint(0, params.vocab_size, (params.batch_size,),
                                     generator=generator).to(device),
        req_pool_indices=random_pages(params.batch_size, 0, params.pool_rows, generator).to(device),
        seq_lens=torch.randint(1, params.context_len, (params.batch_size,), generator=generator).to(device),
        skip_token_table_update=skip.to(device),
    )


def update_selected_rows(state: NgramTableUpdateState) -> bool:
    indices = (~state.skip_token_table_update).nonzero(as_tuple=True)[0]
    if indices.numel() == 0:
        return False
    rows = state.req_pool_indices[indices]
    columns = state.seq_lens[indices]
    state.token_table[rows, columns] = state.next_token_ids[indices].to(torch.int32)
    return True


def update_all_rows(state: NgramTableUpdateState) -> torch.Tensor:
    keep = ~state.skip_token_table_update
    rows, columns = state.req_pool_indices, state.seq_lens
    current = state.token_table[rows, columns]
    state.token_table[rows, columns] = torch.where(keep, state.next_token_ids.to(torch.int32), current)
    return keep.any()


def step(state: NgramTableUpdateState) -> tuple[torch.Tensor, bool | torch.Tensor]:
    """Restore the table (so steps repeat), then write this step's sampled tokens."""
    state.token_table.copy_(state.initial_table)
    updated = update_selected_rows(state) if state.params.variant == "bad" else update_all_rows(state)
    return state.token_table, updated


WORKLOAD = Workload(
    name="ngram-table-update",
    summary="N-gram token table update after sampling: nonzero + numel check vs a dense masked write",
    mirrors="sglang model_executor/model_runner_components/ngram_embedding_manager.py: "
    "update_ngram_token_table_after_sampling",
    params=NgramTableUpdateParams,
    setup=setup,
    step=step,
    expected_rules=("SH103",),
    small={"batch_size": 8, "pool_rows": 16, "context_len": 64, "vocab_size": 100, "skipped": 2},
)
