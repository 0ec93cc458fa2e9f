"""Run a target under torch.profiler on its own named thread and save a gzip Kineto trace with metadata.

Schedule: ``setup()`` once (not recorded), ``warmup`` steps (not recorded), ``iterations`` recorded steps, then
(unless ``guard=False``) ``iterations`` more steps under the runtime guard. The trace's ``synchunt`` metadata
says what the trace cannot: the target and its options, thread names, the activities recorded, where the
user's files live (``sources``, see :mod:`synchunt.source_map`) and what the guard saw (``guard``, see
:mod:`synchunt.capture.guard_pass`).
"""

from __future__ import annotations

import datetime as _dt
import platform
import tempfile
import threading
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synchunt.capture.as_imported import digests_as_imported
from synchunt.capture.frame_names import frame_file_resolver
from synchunt.capture.guard_pass import GuardPass, guard_json, run_guarded
from synchunt.capture.native import profiler_call
from synchunt.capture.targets import SHADOW_DEVICE, Target
from synchunt.capture.tracefile import unique_trace_path, write_gzip_with_metadata
from synchunt.errors import TargetError
from synchunt.sites import LIBRARY_PACKAGES
from synchunt.source_map import (
    SOURCE_MAP_KEY,
    SourceMap,
    build_source_map,
    module_files,
    naming_path,
    profiler_search_path,
    search_entries,
)
from synchunt.trace.vocab import GUARD_PASS_KEY, SHADOW_KEY

OLDEST_TESTED_TORCH = (2, 13)  # the oldest torch release profile and the guard are tested with


@dataclass(frozen=True)
class CaptureSettings:
    """Warm-up iterations run before the recorded window (torch.profiler schedule) and are not recorded;
    ``guard`` adds a pass of ``iterations`` steps under the runtime guard after the recorded window."""

    warmup: int = 1
    iterations: int = 1
    with_stack: bool = True
    record_shapes: bool = True
    guard: bool = True


@dataclass(frozen=True)
class Capture:
    """A saved trace. ``guard_records`` are the guard pass's records as stored in ``metadata["guard"]`` (empty
    without a guard pass); ``notes`` are things worth telling the user (e.g. an untested torch)."""

    path: Path
    metadata: dict[str, Any]
    native_log: str = ""  # what torch's C++ profiler wrote to stderr while recording
    guard_records: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()


def recorded_activities(device: str) -> tuple[str, ...]:
    """What the profiler records for ``device``: CPU always, CUDA for ``cuda``/``cuda:N`` (whatever the target's
    parameters are)."""
    return ("cpu", "cuda") if device.startswith("cuda") else ("cpu",)


def require_torch() -> None:
    """Fail with one line that says what to install when torch is not installed, without importing it (the
    capture's child process imports it; importing it here too would cost seconds)."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise TargetError("profiling needs torch, which is not installed here; install it, e.g. "
                          "pip install 'synchunt[torch]'")


def import_torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise TargetError(f"profiling needs torch, which cannot be imported here ({error}); install it, e.g. "
                          "pip install 'synchunt[torch]'") from None
    return torch


def cuda_available(torch: Any) -> bool:
    return bool(torch.cuda.is_available())


def torch_notes(version: str) -> tuple[str, ...]:
    numbers = []
    for part in version.split("+")[0].split(".")[:2]:
        if not part.isdigit():
            return ()
        numbers.append(int(part))
    if tuple(numbers) >= OLDEST_TESTED_TORCH:
        return ()
    oldest = ".".join(map(str, OLDEST_TESTED_TORCH))
    return (f"torch {version} is older than {oldest}, the oldest release synchunt's profiler is tested with",)


def warmup_note(warmup: int) -> tuple[str, ...]:
    if warmup:
        return ()
    return ("no warm-up step (--warmup 0): the recorded step pays first-call costs (library initialization, "
            "allocator growth) that steady state does not",)


def capture(target: Target, out_dir: str | Path, settings: CaptureSettings | None = None) -> Capture:
    """Profile ``target``: set up, then warm-up + recorded steps on a thread named ``target.thread_name``.

    The profiler starts on that thread, so its Python frames are recorded; other threads' ops are recorded
    too where the installed torch supports ``profile_all_threads``.
    """
    torch = import_torch()
    out_dir = Path(out_dir)
    settings = settings or CaptureSettings()
    if settings.iterations < 1 or settings.warmup < 0:
        raise TargetError("need at least one recorded iteration and a non-negative warm-up")
    if target.device.startswith("cuda") and not cuda_available(torch):
        raise TargetError(f"device {target.device!r} requested but torch.cuda is not available here")
    if target.device == SHADOW_DEVICE:
        from synchunt.shadow import check_machine

        check_machine()
    root = target.project_root or str(Path.cwd())
    search = [*profiler_search_path(), root]
    naming = naming_path(root, search_entries(search))
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="synchunt-") as scratch:
        raw_path = Path(scratch) / "trace.json"
        log_path = Path(scratch) / "native.log"
        outcome: dict[str, Any] = {}
        worker = threading.Thread(target=_run, name=target.thread_name,
                                  args=(target, settings, raw_path, log_path, naming, outcome), daemon=True)
        worker.start()
        worker.join()
        native_log = log_path.read_text(errors="replace") if log_path.exists() else ""
        if "error" in outcome:
            error = outcome["error"]
            raise TargetError(f"target {target.title!r} failed: {type(error).__name__}: {error}"
                              f"{_where(error)}") from error
        if not raw_path.exists():
            raise TargetError("the profiler wrote no trace" + (f": {native_log.strip()}" if native_log else ""))
        sources = build_source_map(root, library_packages=LIBRARY_PACKAGES, user_packages=target.user_packages,
                                   search_path=search, as_imported=digests_as_imported())
        metadata = _metadata(target, settings, outcome["threads"], torch.__version__, sources)
        guard: GuardPass | None = outcome.get("guard")
        if guard is not None:
            metadata[GUARD_PASS_KEY] = guard_json(guard, sources.canonical)
        if "shadow_notes" in outcome:
            metadata[SHADOW_KEY] = {"notes": [{**note, "file": sources.canonical(note["file"])}
                                              for note in outcome["shadow_notes"]],
                                    "device_tensors": outcome["shadow_device_tensors"]}
        final = unique_trace_path(out_dir, target.title)
        write_gzip_with_metadata(raw_path, final, metadata,
                                 frame_file_resolver(module_files(), sources.canonical))
    records = tuple(metadata[GUARD_PASS_KEY]["records"]) if guard is not None else ()
    return Capture(path=final, metadata=metadata, native_log=native_log, guard_records=records,
                   # the shadow device's notes are the analysis's (every format), not the capture's
                   notes=torch_notes(torch.__version__) + warmup_note(settings.warmup))


def _enter_emulation(target: Target) -> Any:
    """The shadow device, entered, for a ``shadow-cuda`` target (set-up, recorded steps and guard pass run under
    it); None for any other."""
    if target.device != SHADOW_DEVICE:
        return None
    from synchunt.shadow import shadow_device

    return shadow_device().__enter__()


def _leave_emulation(shadow: Any, outcome: dict[str, Any]) -> None:
    if shadow is not None:
        shadow.__exit__(None, None, None)
        outcome["shadow_notes"] = [note.to_json() for note in shadow.notes]
        outcome["shadow_device_tensors"] = shadow.device_tensors


def _where(error: BaseException) -> str:
    """`` (at file.py:12 in f)``: the innermost frame of the target's traceback, for the one-line error."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno} in {last.name})"


def _run(target: Target, settings: CaptureSettings, raw_path: Path, log_path: Path, naming: list[str],
         outcome: dict[str, Any]) -> None:
    import torch
    from torch import profiler

    shadow = None
    try:
        shadow = _enter_emulation(target)
        state = target.setup()
        activities = [getattr(profiler.ProfilerActivity, name.upper())
                      for name in recorded_activities(target.device)]
        config = _experimental_config(torch, cuda=target.device.startswith("cuda"))
        extra = {"experimental_config": config} if config is not None else {}

        def export(prof: Any) -> None:
            prof.export_chrome_trace(str(raw_path))

        with warnings.catch_warnings():  # --warmup 0 was asked for: said once as a note (warmup_note), not as
            warnings.filterwarnings("ignore", message=".*won't be using warmup")  # torch's warning at our line
            schedule = profiler.schedule(wait=0, warmup=settings.warmup, active=settings.iterations, repeat=1)
        prof = profiler.profile(activities=activities, record_shapes=settings.record_shapes,
                                with_stack=settings.with_stack, on_trace_ready=export, schedule=schedule, **extra)
        with profiler_call(log_path, naming):
            prof.start()
        try:
            for _ in range(settings.warmup + settings.iterations):
                target.step(state)
                with profiler_call(log_path, naming):
                    prof.step()
        finally:
            with profiler_call(log_path, naming):
                prof.stop()
        if settings.guard:
            outcome["guard"] = run_guarded(target.step, state, settings.iterations)
        threads = {str(t.native_id): t.name for t in threading.enumerate() if t.native_id is not None}
        threads[str(threading.get_native_id())] = threading.current_thread().name
        outcome["threads"] = threads
    except BaseException as error:  # reported on the calling thread
        outcome["error"] = error
    finally:
        _leave_emulation(shadow, outcome)


def _experimental_config(torch: Any, *, cuda: bool) -> Any:
    """``profile_all_threads`` and (on CUDA) ``enable_cuda_sync_events`` where this torch knows them."""
    config_type = getattr(getattr(torch._C, "_profiler", None), "_ExperimentalConfig", None)
    if config_type is None:
        return None
    wanted = {"profile_all_threads": True}
    if cuda:
        wanted["enable_cuda_sync_events"] = True
    supported = {}
    for key, value in wanted.items():
        try:
            config_type(**{key: value})
        except TypeError:
            continue
        supported[key] = value
    return config_type(**supported) if supported else None


def _metadata(target: Target, settings: CaptureSettings, threads: dict[str, str], torch_version: str,
              sources: SourceMap) -> dict[str, Any]:
    from synchunt import __version__

    return {
        "target": target.name, "label": target.label, "title": target.title, "params": dict(target.params),
        "device": target.device, "activities": list(recorded_activities(target.device)),
        "torch": torch_version, "python": platform.python_version(), "synchunt": __version__,
        "warmup": settings.warmup, "iterations": settings.iterations, "threads": threads,
        "profiled_thread": target.thread_name,
        "captured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        SOURCE_MAP_KEY: sources.to_json(),
    }
