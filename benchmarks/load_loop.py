"""Time one scheduler iteration's HiCache load loop: masked vs sliced DCP translation vs no DCP.

Each sample queues the prepared loads and runs ``start_loading()`` on a thread named ``scheduler``
(the seed measured that thread's wall time), then waits for the device (end-to-end). The forward that
consumes the layers runs untimed after each sample so every sample starts from the same state.
Configurations are interleaved within each repeat; medians are reported.

    python benchmarks/load_loop.py --repeats 50 --device cpu

The last line reads ``masked/none=<ratio> sliced/none=<ratio>`` (scheduler-thread wall time, on the
last device measured: CUDA when present).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence

import torch
from machine import Quietness, add_quiet_options

from synchunt_workloads.hicache_dcp import HiCacheParams, HiCacheState, forward, run_on_scheduler_thread, setup

CONFIGS: dict[str, dict[str, object]] = {
    "masked": {"impl": "masked"},
    "sliced": {"impl": "sliced"},
    # No DCP, the same physical rows per rank: 8 pages of 64 rows.
    "none": {"impl": "sliced", "dcp_size": 1},
}


def sample(state: HiCacheState) -> tuple[float, float]:
    """One load loop: (scheduler wall ms, end-to-end ms including the device finishing it)."""
    device_module = torch.get_device_module(state.device)
    controller = state.controller
    start = time.perf_counter_ns()
    controller.load_queue.extend(state.prepared_ops)
    producer_id = controller.start_loading()
    launched = time.perf_counter_ns()
    device_module.synchronize()
    finished = time.perf_counter_ns()
    controller.layer_done_counter.set_consumer(producer_id)
    forward(state)
    device_module.synchronize()
    return (launched - start) / 1e6, (finished - start) / 1e6


def measure(device: str, repeats: int, warmup: int, backend: str) -> dict[str, tuple[float, float]]:
    """Median (scheduler ms, end-to-end ms) per configuration, all samples taken on one thread."""
    states = {name: setup(HiCacheParams(device=device, backend=backend, **overrides))  # type: ignore[arg-type]
              for name, overrides in CONFIGS.items()}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in states}
    order = list(states)
    for repeat in range(warmup + repeats):
        rotated = order[repeat % len(order):] + order[:repeat % len(order)]
        for name in rotated:
            timing = sample(states[name])
            if repeat >= warmup:
                samples[name].append(timing)
    return {name: (statistics.median(t[0] for t in runs), statistics.median(t[1] for t in runs))
            for name, runs in samples.items()}


def default_devices() -> list[str]:
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30, help="measured samples per configuration")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured samples per configuration first")
    parser.add_argument("--device", action="append", dest="devices",
                        help="device to measure (repeatable); default: cpu, and cuda when available")
    parser.add_argument("--backend", default="kernel", choices=("kernel", "direct"))
    add_quiet_options(parser)
    args = parser.parse_args(argv)
    quiet = Quietness.before(args)
    devices = args.devices or default_devices()

    params = HiCacheParams()
    print(f"load loop: {params.layers} layers, kv_dim {params.kv_dim} {params.dtype}, dcp {params.dcp_size}, "
          f"{params.load_pages} pages x {params.page_size} rows per rank, backend {args.backend}, "
          f"{args.repeats} repeats (median), torch {torch.__version__}")
    ratios = ""
    for device in devices:
        def run(device: str = device) -> dict[str, tuple[float, float]]:
            return measure(device, args.repeats, args.warmup, args.backend)

        medians = run_on_scheduler_thread(run)
        print(f"[{device}]  {'config':<8} {'scheduler ms':>13} {'end-to-end ms':>14}")
        for name, (wall_ms, e2e_ms) in medians.items():
            print(f"[{device}]  {name:<8} {wall_ms:>13.3f} {e2e_ms:>14.3f}")
        masked, sliced, none = (medians[name][0] for name in ("masked", "sliced", "none"))
        ratios = f"masked/none={masked / none:.2f} sliced/none={sliced / none:.2f}"
    verdict = quiet.after()
    print(verdict.line)
    print(ratios)
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())
