"""Audit paths: small, faithful reproductions of D2H-sensitive code paths in sglang.

Each module mirrors one real function, in a ``bad`` variant (the syncing code) and a ``fixed`` variant
(the sync-free rewrite with identical results under the path's invariants), and registers one
``Workload``. ``docs/paths.md`` tabulates them.
"""

from __future__ import annotations

from synchunt.capture.workload import Workload
from synchunt_workloads.paths import (
    dcp_kv_filter,
    dcp_prefill_planner,
    hisparse_request_finished,
    host_pool_free,
    interleave_write_plan,
    move_indices,
    multi_ended_free,
    ngram_table_update,
    paged_free,
)

WORKLOADS: tuple[Workload, ...] = (
    dcp_kv_filter.WORKLOAD,
    dcp_prefill_planner.WORKLOAD,
    move_indices.WORKLOAD,
    host_pool_free.WORKLOAD,
    paged_free.WORKLOAD,
    multi_ended_free.WORKLOAD,
    interleave_write_plan.WORKLOAD,
    ngram_table_update.WORKLOAD,
    hisparse_request_finished.WORKLOAD,
)

__all__ = ["WORKLOADS"]
