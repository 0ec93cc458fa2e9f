"""Overhead of the runtime guard: ``watch()`` around a HiCache iteration and around a decode-like step, vs bare.

Two steps, timed on the calling thread, each entered and left under ``watch()`` per sample (so entering and
leaving the guard is included):

- ``hicache-dcp``: one ``step`` of the workload (queue the prepared loads, ``start_loading()`` over 27 layers,
  the stand-in forward; ~385 aten ops, no sync), in four configurations:
  ``unguarded``; ``passthrough``, under a ``TorchDispatchMode`` that only forwards each op (the floor any
  dispatch-mode guard pays: one C++ → Python round trip per aten op); ``mode``, ``watch()`` on its dispatch-mode
  route (``SYNCHUNT_GUARD_ROUTE=mode``); ``kernels``, ``watch()`` on its default route (Python kernels at
  ``PreDispatch`` for the catalogue's ops);
- ``decode``: a generic decode-like step (``decode_step.py``: ~430 small ops, ``layer_norm``, ``matmul``,
  ``softmax``, ``index_select``, slice assignment, ``cat``; no sync), ``bare`` and under ``watch()``.

All six configurations run in every repeat, each step's configurations in a rotating order. Medians are
reported, with the spread of the per-repeat ratios (interquartile range) as the noise figure, and the ratio of
the fastest samples (noise only ever adds time). The machine's load and each baseline against its quiet value
are checked (``machine.py``): a loaded run is reported as ``NOISE`` and exits 3 (``--allow-loaded`` prints it,
still marked).

    python benchmarks/guard_overhead.py --repeats 200 --impl sliced --clock thread

The last line reads ``passthrough=<ratio> mode=<ratio> kernels=<ratio> decode=<ratio>`` against each step's
bare run (goals: kernels 1.3, decode 1.5). On a loaded machine, count instructions instead (repeatable under
load): ``--region NAME`` runs ``--repeats`` steps of one configuration inside ``functools.reduce`` and nothing
else, so that callgrind collects exactly those steps; compare the ``summary:`` lines of two runs::

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=functools_reduce \
        --callgrind-out-file=bare.out python benchmarks/guard_overhead.py --repeats 5 --region bare
    (the same with --region watch); grep summary bare.out watch.out
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from decode_step import DecodeStep, count_ops
from machine import Quietness, add_quiet_options
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


# Medians on a quiet 2-core machine (thread clock): a baseline far above them says the run was disturbed.
QUIET_BASELINE_MS = {"unguarded": 6.0, "bare": 1.0}  # per step


def _configurations(impl: str, small: bool, decode_steps: int = 1,
                    ) -> tuple[list[dict[str, Callable[[], Any]]], dict[str, int], Any, DecodeStep]:
    """Each step's configurations by name, the dict each guarded run writes its record count to, the HiCache
    params and the decode step; a decode sample is ``decode_steps`` steps, each entered and left under
    ``watch()`` when guarded."""
    workload = get_workload("hicache-dcp")
    params = workload.make_params({"impl": impl}, small=small)
    state = workload.setup(params)
    decode = DecodeStep()
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

    def decode_bare() -> None:
        for _ in range(decode_steps):
            decode()

    def decode_guarded() -> None:
        syncs = 0
        for _ in range(decode_steps):
            with watch() as recorder:
                decode()
            syncs += len(recorder.syncs)
        recorded["decode"] = syncs // decode_steps

    steps: list[dict[str, Callable[[], Any]]] = [
        {"unguarded": lambda: workload.step(state), "passthrough": passthrough, "mode": guarded("mode"),
         "kernels": guarded("kernels")},
        {"bare": decode_bare, "watch": decode_guarded}]
    return steps, recorded, params, decode


def measure(impl: str, repeats: int, warmup: int, small: bool, clock: Callable[[], int] = time.perf_counter_ns,
            decode_steps: int = 1) -> tuple[dict[str, list[float]], dict[str, int], Any, int]:
    """Per-repeat ms of each configuration (a decode sample: ``decode_steps`` steps), the syncs one guarded step
    records per route, the HiCache params, and the aten ops of one decode step."""
    steps, recorded, params, decode = _configurations(impl, small, decode_steps)
    samples: dict[str, list[float]] = {name: [] for runs in steps for name in runs}
    for repeat in range(warmup + repeats):
        for runs in steps:
            names = list(runs)
            shift = repeat % len(names)
            for name in names[shift:] + names[:shift]:
                elapsed = _timed(runs[name], clock)
                if repeat >= warmup:
                    samples[name].append(elapsed)
    return samples, recorded, params, count_ops(decode)


REGIONS = ("unguarded", "passthrough", "mode", "kernels", "bare", "watch")


def run_region(name: str, impl: str, steps: int, *, small: bool) -> None:
    """``steps`` runs of one configuration inside ``functools.reduce`` (callgrind's toggle), after three warm ones."""
    configurations, _, _, _ = _configurations(impl, small)
    run = next(runs[name] for runs in configurations if name in runs)
    for _ in range(3):
        run()
    functools.reduce(lambda done, _: [run() for _ in range(steps)] and done, [0], 0)


def _ratio_spread(samples: dict[str, list[float]], name: str, base: str = "unguarded") -> tuple[float, float, float]:
    """Median of the per-repeat ratios to ``base``, and their first and third quartiles."""
    ratios = sorted(value / baseline for value, baseline in zip(samples[name], samples[base], strict=True))
    quartiles = statistics.quantiles(ratios, n=4)
    return statistics.median(ratios), quartiles[0], quartiles[2]


def _lines(samples: dict[str, list[float]], names: Sequence[str], base: str) -> list[str]:
    lines = []
    fastest = {name: min(samples[name]) for name in names}
    for name in names:
        line = f"  {name:<12} median {statistics.median(samples[name]):8.3f} ms, min {fastest[name]:8.3f} ms"
        if name != base:
            ratio, low, high = _ratio_spread(samples, name, base)
            line += (f"   ×{ratio:.2f} (per-repeat ratios, IQR {low:.2f}–{high:.2f}; "
                     f"min/min ×{fastest[name] / fastest[base]:.2f})")
        lines.append(line)
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="sliced", choices=("sliced", "masked"))
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="the workload's small preset (a quick check)")
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                        help="wall time, or the calling thread's CPU time (robust on a loaded machine)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch's intra-op threads (default: torch's own); 1 keeps OpenMP's spin-wait for a busy "
                        "core out of the thread clock on a loaded machine")
    parser.add_argument("--decode-steps", type=int, default=10,
                        help="decode steps per timed sample, each entered and left under watch() when guarded "
                        "(one step is ~1 ms: single steps spread the per-sample ratios by ±0.3)")
    parser.add_argument("--region", choices=REGIONS,
                        help="only run --repeats steps of this configuration, for callgrind (see above)")
    add_quiet_options(parser)
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.region is not None:
        run_region(args.region, args.impl, args.repeats, small=args.small)
        return
    quiet = Quietness.before(args)
    samples, syncs, params, decode_ops = measure(args.impl, args.repeats, args.warmup, args.small,
                                                 CLOCKS[args.clock], args.decode_steps)
    for name in ("bare", "watch"):  # reported per step
        samples[name] = [value / args.decode_steps for value in samples[name]]
    verdict = quiet.after()
    if args.clock == "thread" and not args.small:  # the quiet baselines are thread-clock figures of the full steps
        for base, quiet_ms in QUIET_BASELINE_MS.items():
            if verdict.quiet:
                verdict = quiet.after(baseline_ms=statistics.median(samples[base]), quiet_baseline_ms=quiet_ms)
    print(f"guard overhead: {args.repeats} repeats (median), {args.clock} clock, {torch.get_num_threads()} intra-op "
          f"threads, torch {torch.__version__}")
    print(f"hicache-dcp impl={args.impl}, {params.layers} layers, device {params.device}:")
    print("\n".join(_lines(samples, ("unguarded", "passthrough", "mode", "kernels"), "unguarded")))
    print(f"  syncs recorded per guarded step: mode {syncs['mode']}, kernels {syncs['kernels']}")
    print(f"decode-like step, {decode_ops} aten ops ({args.decode_steps} steps a sample, times per step):")
    print("\n".join(_lines(samples, ("bare", "watch"), "bare")))
    print(f"  syncs recorded per guarded step: {syncs['decode']}")
    print(verdict.line)
    ratios = {name: _ratio_spread(samples, name)[0] for name in ("passthrough", "mode", "kernels")}
    ratios["decode"] = _ratio_spread(samples, "watch", "bare")[0]
    print(" ".join(f"{name}={ratio:.2f}" for name, ratio in ratios.items()))
    sys.exit(verdict.exit_code)


if __name__ == "__main__":
    main()
