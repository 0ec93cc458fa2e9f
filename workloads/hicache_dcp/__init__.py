"""sglang's DCP HiCache load path in plain torch, in its syncing form and its sync-free form.

``impl="masked"`` translates logical slots with a boolean mask inside the per-layer load loop (one
``aten::nonzero`` per layer for host and device indices: 54 on DeepSeek-V2-Lite's 27 layers);
``impl="sliced"`` is the fix from sglang PR #34889 (a strided slice, no sync).
"""

from synchunt.capture.workload import Workload
from synchunt_workloads.hicache_dcp.controller import CacheOperation, HiCacheController, LayerDoneCounter
from synchunt_workloads.hicache_dcp.device_pool import MLATokenToKVPool, PagedTokenToKVPoolAllocator
from synchunt_workloads.hicache_dcp.host_pool import MLATokenToKVPoolHost
from synchunt_workloads.hicache_dcp.scheduler import (
    HiCacheParams,
    HiCacheState,
    forward,
    run_on_scheduler_thread,
    setup,
    step,
)
from synchunt_workloads.hicache_dcp.translate import (
    dcp_kernel_indices_masked,
    dcp_kernel_indices_sliced,
    maybe_dcp_kernel_indices,
)

SMALL_PRESET = {
    "layers": 4,
    "kv_lora_rank": 48,
    "qk_rope_head_dim": 16,
    "page_size": 8,
    "load_pages": 3,
    "host_pages": 6,
    "device_pages": 4,
}

WORKLOADS: tuple[Workload, ...] = (
    Workload(
        name="hicache-dcp",
        summary="HiCache host→device KV load with decode context parallelism: per-layer DCP index "
        "translation inside start_loading on the scheduler thread",
        mirrors="sglang mem_cache/pool_host (MLA) load_to_device_per_layer / cache_controller start_loading "
        "(PR #34889)",
        params=HiCacheParams,
        setup=setup,
        step=step,
        thread_name="scheduler",
        variant_field="impl",
        variants={"bad": "masked", "fixed": "sliced"},
        expected_rules=("SH101",),
        small=SMALL_PRESET,
    ),
)

__all__ = [
    "SMALL_PRESET",
    "WORKLOADS",
    "CacheOperation",
    "HiCacheController",
    "HiCacheParams",
    "HiCacheState",
    "LayerDoneCounter",
    "MLATokenToKVPool",
    "MLATokenToKVPoolHost",
    "PagedTokenToKVPoolAllocator",
    "dcp_kernel_indices_masked",
    "dcp_kernel_indices_sliced",
    "forward",
    "maybe_dcp_kernel_indices",
    "run_on_scheduler_thread",
    "setup",
    "step",
]
