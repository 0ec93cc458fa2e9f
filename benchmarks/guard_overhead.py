"""Overhead of the runtime guard: one HiCache iteration guarded by ``watch()`` vs unguarded.

One sample is one ``step`` of the ``hicache-dcp`` workload (queue the prepared loads, ``start_loading()`` over
27 layers, the stand-in forward), timed on the calling thread. Guarded samples enter and leave ``watch()``
around the step, so the cost of installing the dispatch mode and patches is included. A third configuration,
``passthrough``, runs the step under a ``TorchDispatchMode`` that only forwards each op: the floor any
dispatch-level guard pays (one C++ → Python round trip per aten op). The configurations rotate within each
repeat; medians are reported.

    python benchmarks/guard_overhead.py --repeats 40 --impl sliced

The last line reads ``passthrough/unguarded=<ratio> guarded/unguarded=<ratio>`` (goal for the guard: 1.3).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from synchunt.capture import get_workload
from synchunt.guard import watch


class PassThrough(TorchDispatchMode):
    """Forwards every op unchanged: the cost of the dispatch-mode mechanism alone."""

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        return func(*args, **(kwargs or {}))


def _timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter_ns()
    run()
    return (time.perf_counter_ns() - start) / 1e6


def measure(impl: str, repeats: int, warmup: int, small: bool) -> tuple[dict[str, float], int, Any]:
    """Median ms per configuration, the number of syncs one guarded step records, and the params."""
    workload = get_workload("hicache-dcp")
    params = workload.make_params({"impl": impl}, small=small)
    state = workload.setup(params)
    recorded: list[int] = []

    def guarded() -> None:
        with watch() as recorder:
            workload.step(state)
        recorded.append(len(recorder.syncs))

    def passthrough() -> None:
        with PassThrough():
            workload.step(state)

    runs: dict[str, Callable[[], Any]] = {"unguarded": lambda: workload.step(state), "passthrough": passthrough,
                                          "guarded": guarded}
    samples: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for repeat in range(warmup + repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            elapsed = _timed(runs[name])
            if repeat >= warmup:
                samples[name].append(elapsed)
    return {name: statistics.median(values) for name, values in samples.items()}, recorded[-1], params


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="sliced", choices=("sliced", "masked"))
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="the workload's small preset (a quick check)")
    args = parser.parse_args(argv)
    medians, syncs, params = measure(args.impl, args.repeats, args.warmup, args.small)
    print(f"guard overhead: hicache-dcp impl={args.impl}, {params.layers} layers, device {params.device}, "
          f"{args.repeats} repeats (median), torch {torch.__version__}")
    for name, value in medians.items():
        print(f"  {name:<10} {value:8.3f} ms")
    print(f"  syncs recorded per guarded step: {syncs}")
    print(f"passthrough/unguarded={medians['passthrough'] / medians['unguarded']:.2f} "
          f"guarded/unguarded={medians['guarded'] / medians['unguarded']:.2f}")


if __name__ == "__main__":
    main()
