"""Overhead of the runtime guard: one HiCache iteration guarded by ``watch()`` vs unguarded.

One sample is one ``step`` of the ``hicache-dcp`` workload (queue the prepared loads, ``start_loading()`` over
27 layers, the stand-in forward), timed on the calling thread. Guarded samples enter and leave ``watch()``
around the step, so entering and leaving the guard is included. Configurations:

- ``unguarded``: the step alone;
- ``passthrough``: under a ``TorchDispatchMode`` that only forwards each op, the floor any dispatch-mode
  guard pays (one C++ → Python round trip per aten op);
- ``mode``: ``watch()`` on its dispatch-mode route (``SYNCHUNT_GUARD_ROUTE=mode``);
- ``kernels``: ``watch()`` on its default route, Python kernels at ``PreDispatch`` for the catalogue's ops.

The configurations rotate within each repeat; medians are reported, with the spread of the per-repeat
ratios (interquartile range) as the noise figure, and the ratio of the fastest samples (what an undisturbed
run approaches when other processes load the machine: noise only ever adds time).

    python benchmarks/guard_overhead.py --repeats 60 --impl sliced [--clock thread]

The last line reads ``passthrough=<ratio> mode=<ratio> kernels=<ratio>`` against unguarded (goal: 1.3).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from synchunt.capture import get_workload
from synchunt.guard import watch
from synchunt.guard.install import ROUTE_VARIABLE


class PassThrough(TorchDispatchMode):
    """Forwards every op unchanged: the cost of the dispatch-mode mechanism alone."""

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        return func(*args, **(kwargs or {}))


CLOCKS: dict[str, Callable[[], int]] = {
    # wall time, and the calling thread's CPU time: the latter leaves out time spent waiting for a core,
    # which dominates when other processes load the machine (the workload runs on the calling thread).
    "wall": time.perf_counter_ns,
    "thread": time.thread_time_ns,
}


def _timed(run: Callable[[], Any], clock: Callable[[], int]) -> float:
    start = clock()
    run()
    return (clock() - start) / 1e6


def measure(impl: str, repeats: int, warmup: int, small: bool,
            clock: Callable[[], int] = time.perf_counter_ns) -> tuple[dict[str, list[float]], dict[str, int], Any]:
    """Per-repeat ms of each configuration, the syncs one guarded step records per route, and the params."""
    workload = get_workload("hicache-dcp")
    params = workload.make_params({"impl": impl}, small=small)
    state = workload.setup(params)
    recorded: dict[str, int] = {}

    def guarded(route: str) -> Callable[[], None]:
        def run() -> None:
            os.environ[ROUTE_VARIABLE] = route  # read when the guard installs, i.e. at each entry here
            try:
                with watch() as recorder:
                    workload.step(state)
            finally:
                os.environ.pop(ROUTE_VARIABLE, None)
            recorded[route] = len(recorder.syncs)
        return run

    def passthrough() -> None:
        with PassThrough():
            workload.step(state)

    runs: dict[str, Callable[[], Any]] = {"unguarded": lambda: workload.step(state), "passthrough": passthrough,
                                          "mode": guarded("mode"), "kernels": guarded("kernels")}
    samples: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for repeat in range(warmup + repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            elapsed = _timed(runs[name], clock)
            if repeat >= warmup:
                samples[name].append(elapsed)
    return samples, recorded, params


def _ratio_spread(samples: dict[str, list[float]], name: str) -> tuple[float, float, float]:
    """Median of the per-repeat ratios to unguarded, and their first and third quartiles."""
    ratios = sorted(value / base for value, base in zip(samples[name], samples["unguarded"], strict=True))
    quartiles = statistics.quantiles(ratios, n=4)
    return statistics.median(ratios), quartiles[0], quartiles[2]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="sliced", choices=("sliced", "masked"))
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="the workload's small preset (a quick check)")
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                        help="wall time, or the calling thread's CPU time (robust on a loaded machine)")
    args = parser.parse_args(argv)
    samples, syncs, params = measure(args.impl, args.repeats, args.warmup, args.small, CLOCKS[args.clock])
    print(f"guard overhead: hicache-dcp impl={args.impl}, {params.layers} layers, device {params.device}, "
          f"{args.repeats} repeats (median), {args.clock} clock, torch {torch.__version__}")
    fastest = {name: min(values) for name, values in samples.items()}
    for name, values in samples.items():
        line = f"  {name:<12} median {statistics.median(values):8.3f} ms, min {fastest[name]:8.3f} ms"
        if name != "unguarded":
            ratio, low, high = _ratio_spread(samples, name)
            line += (f"   ×{ratio:.2f} (per-repeat ratios, IQR {low:.2f}–{high:.2f}; "
                     f"min/min ×{fastest[name] / fastest['unguarded']:.2f})")
        print(line)
    print(f"  syncs recorded per guarded step: mode {syncs['mode']}, kernels {syncs['kernels']}")
    print(" ".join(f"{name}={_ratio_spread(samples, name)[0]:.2f}" for name in ("passthrough", "mode", "kernels")))


if __name__ == "__main__":
    main()
