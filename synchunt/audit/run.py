"""Run the audit matrix: every chosen path, in both variants, under the profiler and under the runtime guard.

Both signals run the same schedule on fresh state: set up, ``warmup`` steps that are not observed, then
``iterations`` observed steps. The trace is captured on a thread named like the workload's thread and only
that thread's syncs count; the guard watches the calling thread, which runs set-up and steps itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from synchunt.audit.agreement import compare_signals
from synchunt.audit.model import ROLES, Agreement, AuditResult, Cell, Signal
from synchunt.capture import CaptureSettings, Target, Workload, capture
from synchunt.capture.registry import unknown_name_message
from synchunt.errors import TargetError, UsageError
from synchunt.sites import SiteCount


def run_audit(names: Sequence[str] | None = None, *, device: str = "cpu", small: bool = True,
              traces_dir: Path | None = None, settings: CaptureSettings | None = None,
              registry: Mapping[str, Workload] | None = None) -> AuditResult:
    """Audit the named paths (default: every registered one) on ``device`` and return the matrix.

    ``small`` uses each path's small preset. ``traces_dir`` keeps the traces there (default: a temporary
    folder, removed afterwards). ``registry`` replaces the registered workloads (default: the
    ``synchunt.workloads`` entry points).
    Raises :class:`UsageError` for unknown names, an unknown device or a CUDA device torch cannot use.
    """
    if registry is None:
        from synchunt.capture import registered_workloads

        registry = registered_workloads()
    chosen = _choose(names, registry)
    device = _check_device(device, chosen)
    settings = settings or CaptureSettings(warmup=1, iterations=1)
    trace_mode = "latent" if device == "cpu" else "confirmed"
    started = time.perf_counter()
    cells: list[Cell] = []
    with _traces_folder(traces_dir) as folder:
        for workload in chosen:
            for role in ROLES:
                if role in workload.variants:
                    cells.append(audit_cell(workload, role, device=device, small=small, folder=folder,
                                            settings=settings, keep_trace=traces_dir is not None))
    import torch

    from synchunt import __version__

    return AuditResult(device=device, trace_mode=trace_mode, small=small, warmup=settings.warmup,
                       iterations=settings.iterations, cells=tuple(cells), seconds=time.perf_counter() - started,
                       meta={"synchunt": __version__, "torch": torch.__version__})


def audit_cell(workload: Workload, role: str, *, device: str, small: bool, folder: Path,
               settings: CaptureSettings, keep_trace: bool) -> Cell:
    """One path in one variant: trace it, guard it, compare, judge. A run that raises becomes a failed cell."""
    started = time.perf_counter()
    variant = str(workload.variants[role])
    expected = tuple(workload.expected_rules) if role == "bad" else ()
    trace_mode = "latent" if device == "cpu" else "confirmed"
    trace_file: str | None = None
    try:
        params = _params(workload, variant, device, small)
        trace, path = _trace_signal(workload, params, device, folder, settings, trace_mode)
        trace_file = str(path) if keep_trace else None
        guard = _guard_signal(workload, params, settings, trace_mode)
    except Exception as error:  # the workload's own failure: report it in the matrix, audit the rest
        # capture() wraps the step's exception in a TargetError; the step's own error is the news.
        cause = error.__cause__ if isinstance(error, TargetError) and error.__cause__ is not None else error
        message = f"{type(cause).__name__}: {cause}"
        return Cell(path=workload.name, role=role, variant=variant, trace=None, guard=None,
                    agreement=Agreement.UNKNOWN, expected_rules=expected, failure=f"the run failed: {message}",
                    error=message, trace_file=trace_file, seconds=time.perf_counter() - started)
    agreement, notes = compare_signals(trace, guard, trace_mode)
    seen = set(trace.rules) | set(guard.rules)
    missing = tuple(code for code in expected if code not in seen) if role == "bad" else ()
    unexpected = tuple(sorted(seen - set(expected))) if role == "bad" and expected else ()
    return Cell(path=workload.name, role=role, variant=variant, trace=trace, guard=guard, agreement=agreement,
                notes=notes, expected_rules=expected, missing_rules=missing, unexpected_rules=unexpected,
                failure=_failure(role, trace, guard), trace_file=trace_file, seconds=time.perf_counter() - started)


def _failure(role: str, trace: Signal, guard: Signal) -> str | None:
    if role == "fixed" and (trace.syncs or guard.syncs):
        return f"the fixed variant syncs (trace ×{trace.syncs}, guard ×{guard.syncs})"
    if role == "bad" and not trace.syncs and not guard.syncs:
        return "the bad variant shows no sync in the trace nor under the guard"
    return None


def _choose(names: Sequence[str] | None, registry: Mapping[str, Workload]) -> list[Workload]:
    if not names:
        return list(registry.values())
    unknown = [name for name in names if name not in registry]
    if unknown:
        raise UsageError(unknown_name_message("path", unknown[0], registry))
    return [registry[name] for name in dict.fromkeys(names)]


def _check_device(device: str, chosen: Sequence[Workload]) -> str:
    device = device.strip().lower()
    if device != "cpu" and device != "cuda" and not (device.startswith("cuda:") and device[5:].isdigit()):
        raise UsageError(f"unknown device {device!r}; use cpu, cuda or cuda:N")
    if device != "cpu":
        import torch

        if not torch.cuda.is_available():
            raise UsageError(f"device {device!r} requested but torch.cuda is not available here")
        without = [w.name for w in chosen if "device" not in {f.name for f in dataclasses.fields(w.params)}]
        if without:
            raise UsageError(f"path(s) without a device option cannot run on {device}: {', '.join(without)}")
    return device


def _params(workload: Workload, variant: str, device: str, small: bool) -> Any:
    overrides: dict[str, Any] = {workload.variant_field: variant}
    if "device" in {f.name for f in dataclasses.fields(workload.params)}:
        overrides["device"] = device
    try:
        return workload.make_params(overrides, small=small)
    except (TypeError, ValueError) as error:
        raise UsageError(f"path {workload.name!r}: {error}") from None


def _trace_signal(workload: Workload, params: Any, device: str, folder: Path, settings: CaptureSettings,
                  trace_mode: str) -> tuple[Signal, Path]:
    from synchunt.attribute import analyze

    target = Target(name=workload.name, label=str(getattr(params, workload.variant_field)),
                    setup=lambda: workload.setup(params), step=workload.step, thread_name=workload.thread_name,
                    params=dataclasses.asdict(params), device=device)
    path = capture(target, folder, dataclasses.replace(settings, guard=False)).path  # the guard signal runs apart
    records = analyze(path, mode=trace_mode, thread=workload.thread_name).records
    sites = Counter((r.rule, r.op, r.call_site.file if r.call_site else None,
                     r.call_site.line if r.call_site else None, r.call_site.function if r.call_site else None)
                    for r in records)
    confirmed = sum(1 for r in records if r.confirmed)
    return Signal(syncs=len(records), confirmed=confirmed, latent=len(records) - confirmed,
                  rules=dict(Counter(r.rule for r in records)),
                  sites=tuple(SiteCount(*key, count=n) for key, n in sites.most_common()), mode=trace_mode), path


def _guard_signal(workload: Workload, params: Any, settings: CaptureSettings, mode: str) -> Signal:
    from synchunt.guard import watch

    state = workload.setup(params)
    for _ in range(settings.warmup):
        workload.step(state)
    with watch() as guard:
        for _ in range(settings.iterations):
            workload.step(state)
    # Every record counts, allow_syncs regions included: the audit asks whether a path syncs, as the trace does.
    records = guard.syncs
    sites = Counter((r.rule, r.op, r.file, r.line, r.function) for r in records)
    latent = sum(1 for r in records if r.latent)
    return Signal(syncs=len(records), confirmed=len(records) - latent, latent=latent,
                  rules=dict(Counter(r.rule for r in records)),
                  sites=tuple(SiteCount(*key, count=n) for key, n in sites.most_common()),
                  mode=mode)


@contextlib.contextmanager
def _traces_folder(traces_dir: Path | None) -> Iterator[Path]:
    if traces_dir is not None:
        if traces_dir.exists() and not traces_dir.is_dir():
            raise UsageError(f"{traces_dir} is a file; --out takes a folder")
        traces_dir.mkdir(parents=True, exist_ok=True)
        yield traces_dir
        return
    with tempfile.TemporaryDirectory(prefix="synchunt-audit-") as scratch:
        yield Path(scratch)

