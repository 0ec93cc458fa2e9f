"""What the shadow device costs: one HiCache iteration on its emulated GPU vs the same iteration on the CPU.

One sample is one ``step`` of the ``hicache-dcp`` workload, timed on the calling thread. ``cpu`` builds the
workload with ``device="cpu"`` (plain host tensors); ``shadow`` builds it with ``device="cuda"`` under
``shadow_device()``, so every aten op on a device tensor runs through the emulation's Python dispatch. Both
states live under one activation of the shadow device (a host tensor's ops pay nothing for it), and the two
configurations alternate within each repeat; ``--guard`` adds ``watch()`` around both. Reported: the median of
the per-repeat ratios with their interquartile range, and the ratio of the fastest samples.

    python benchmarks/shadow_overhead.py --repeats 40 --impl sliced [--guard] [--clock thread]

The last line reads ``shadow/cpu=<ratio>``. On a loaded machine, count instructions instead (repeatable under
load): ``--region cpu|cuda`` runs ``--repeats`` steps of one configuration inside ``functools.reduce`` and
nothing else, so that callgrind collects exactly those steps; compare the two ``summary:`` lines::

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=functools_reduce \
        --callgrind-out-file=cpu.out python benchmarks/shadow_overhead.py --small --repeats 3 --region cpu
    (the same with --region cuda); grep summary cpu.out cuda.out
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any

import torch
from machine import Quietness, add_quiet_options

from synchunt.capture import get_workload
from synchunt.guard import watch
from synchunt.shadow import shadow_device

CLOCKS: dict[str, Callable[[], int]] = {"wall": time.perf_counter_ns, "thread": time.thread_time_ns}


def measure(impl: str, repeats: int, warmup: int, *, small: bool, guard: bool,
            clock: Callable[[], int]) -> tuple[dict[str, list[float]], int]:
    """Per-repeat ms of each configuration, and the number of aten ops one step dispatches."""
    workload = get_workload("hicache-dcp")
    with shadow_device():
        states = {device: workload.setup(workload.make_params({"impl": impl, "device": device}, small=small))
                  for device in ("cpu", "cuda")}
        names = {"cpu": "cpu", "shadow": "cuda"}
        samples: dict[str, list[float]] = {name: [] for name in names}
        order = list(names)
        for repeat in range(warmup + repeats):
            for name in order[repeat % 2:] + order[:repeat % 2]:
                state = states[names[name]]
                with watch() if guard else nullcontext():
                    start = clock()
                    workload.step(state)
                    elapsed = (clock() - start) / 1e6
                if repeat >= warmup:
                    samples[name].append(elapsed)
        ops = _count_ops(lambda: workload.step(states["cuda"]))
    return samples, ops


def run_region(impl: str, device: str, steps: int, *, small: bool) -> None:
    """``steps`` steps of one configuration inside ``functools.reduce`` (callgrind's toggle), after a warm one."""
    workload = get_workload("hicache-dcp")
    with shadow_device():
        state = workload.setup(workload.make_params({"impl": impl, "device": device}, small=small))
        workload.step(state)
        functools.reduce(lambda done, _: [workload.step(state) for _ in range(steps)] and done, [0], 0)


def _count_ops(run: Callable[[], Any]) -> int:
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        calls = 0

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                               kwargs: dict[str, Any] | None = None) -> Any:
            Count.calls += 1
            return func(*args, **(kwargs or {}))

    with Count():
        run()
    return Count.calls


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="sliced", choices=("sliced", "masked"))
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="the workload's small preset (a quick check)")
    parser.add_argument("--guard", action="store_true", help="both configurations under watch()")
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="thread",
                        help="the calling thread's CPU time (default: robust to waiting for a core), or wall time")
    parser.add_argument("--region", choices=("cpu", "cuda"),
                        help="only run --repeats steps of this configuration, for callgrind (see above)")
    add_quiet_options(parser)
    args = parser.parse_args(argv)
    if args.region is not None:
        run_region(args.impl, args.region, args.repeats, small=args.small)
        return
    quiet = Quietness.before(args)
    samples, ops = measure(args.impl, args.repeats, args.warmup, small=args.small, guard=args.guard,
                           clock=CLOCKS[args.clock])
    ratios = sorted(s / c for s, c in zip(samples["shadow"], samples["cpu"], strict=True))
    low, _, high = statistics.quantiles(ratios, n=4)
    cpu, shadow = statistics.median(samples["cpu"]), statistics.median(samples["shadow"])
    verdict = quiet.after()
    print(f"shadow overhead: hicache-dcp impl={args.impl}{' (small)' if args.small else ''}, "
          f"{'guarded, ' if args.guard else ''}{args.repeats} repeats, {args.clock} clock, torch {torch.__version__}")
    print(f"  cpu    median {cpu:8.3f} ms, min {min(samples['cpu']):8.3f} ms")
    print(f"  shadow median {shadow:8.3f} ms, min {min(samples['shadow']):8.3f} ms   ×{statistics.median(ratios):.2f} "
          f"(per-repeat ratios, IQR {low:.2f}–{high:.2f}; min/min ×{min(samples['shadow']) / min(samples['cpu']):.2f})")
    print(f"  {ops} aten ops per step: {(shadow - cpu) * 1e3 / ops:.1f} µs of emulation per op")
    print(verdict.line)
    print(f"shadow/cpu={statistics.median(ratios):.2f}")
    sys.exit(verdict.exit_code)


if __name__ == "__main__":
    main()
