"""Run a target under torch.profiler on its own named thread and save a gzip Kineto trace with metadata."""

from __future__ import annotations

import contextlib
import datetime as _dt
import gzip
import json
import os
import platform
import re
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synchunt.capture.targets import Target
from synchunt.errors import TargetError
from synchunt.trace.vocab import SYNCHUNT_METADATA_KEY


@dataclass(frozen=True)
class CaptureSettings:
    """Warm-up iterations run before the recorded window (torch.profiler schedule) and are not recorded."""

    warmup: int = 1
    iterations: int = 1
    with_stack: bool = True
    record_shapes: bool = True


@dataclass(frozen=True)
class Capture:
    path: Path
    metadata: dict[str, Any]
    native_log: str = ""  # what torch's C++ profiler wrote to stderr while recording


def capture(target: Target, out_dir: Path, settings: CaptureSettings | None = None) -> Capture:
    """Profile ``target``: set up, then warm-up + recorded steps on a thread named ``target.thread_name``.

    The profiler starts on that thread, so its Python frames are recorded; other threads' ops are recorded
    too where the installed torch supports ``profile_all_threads``.
    """
    import torch

    settings = settings or CaptureSettings()
    if settings.iterations < 1 or settings.warmup < 0:
        raise TargetError("need at least one recorded iteration and a non-negative warm-up")
    if target.device.startswith("cuda") and not torch.cuda.is_available():
        raise TargetError(f"device {target.device!r} requested but torch.cuda is not available here")
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="synchunt-") as scratch:
        raw_path = Path(scratch) / "trace.json"
        outcome: dict[str, Any] = {}
        log_path = Path(scratch) / "native.log"
        worker = threading.Thread(target=_run, name=target.thread_name,
                                  args=(target, settings, raw_path, log_path, outcome), daemon=True)
        worker.start()
        worker.join()
        native_log = log_path.read_text(errors="replace") if log_path.exists() else ""
        if "error" in outcome:
            error = outcome["error"]
            raise TargetError(f"target {target.name!r} failed: {type(error).__name__}: {error}"
                              f"{_where(error)}") from error
        if not raw_path.exists():
            raise TargetError("the profiler wrote no trace" + (f": {native_log.strip()}" if native_log else ""))
        metadata = _metadata(target, settings, outcome["threads"], torch.__version__)
        final = _unique_path(out_dir, target)
        _write_gzip_with_metadata(raw_path, final, metadata)
    return Capture(path=final, metadata=metadata, native_log=native_log)


def _where(error: BaseException) -> str:
    """`` (at file.py:12 in f)``: the innermost frame of the target's traceback, for the one-line error."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno} in {last.name})"


@contextlib.contextmanager
def _native_stderr_to(path: Path) -> Iterator[None]:
    """Append file descriptor 2 to ``path`` while the profiler starts, steps or stops: Kineto logs its start/stop
    lines there from C++. The target's own steps run with stderr untouched, so its warnings stay visible.

    Starting the profiler off the main thread also makes libkineto print "External init callback must run in
    same thread as registerClient": the callback it skips is torch's on-demand client ``init()``, which is empty,
    so the message is noise for this use.
    """
    try:
        saved = os.dup(2)
    except OSError:  # no usable stderr (embedded interpreters): nothing to redirect
        yield
        return
    try:
        with path.open("ab") as sink:
            sys.stderr.flush()
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def _run(target: Target, settings: CaptureSettings, raw_path: Path, log_path: Path,
         outcome: dict[str, Any]) -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    try:
        state = target.setup()
        activities = [ProfilerActivity.CPU]
        cuda = target.device.startswith("cuda")
        if cuda:
            activities.append(ProfilerActivity.CUDA)
        config = _experimental_config(torch, cuda=cuda)
        extra = {"experimental_config": config} if config is not None else {}

        def export(prof: Any) -> None:
            prof.export_chrome_trace(str(raw_path))

        prof = profile(activities=activities, record_shapes=settings.record_shapes, with_stack=settings.with_stack,
                       schedule=schedule(wait=0, warmup=settings.warmup, active=settings.iterations, repeat=1),
                       on_trace_ready=export, **extra)
        with _native_stderr_to(log_path):
            prof.start()
        try:
            for _ in range(settings.warmup + settings.iterations):
                target.step(state)
                with _native_stderr_to(log_path):
                    prof.step()
        finally:
            with _native_stderr_to(log_path):
                prof.stop()
        threads = {str(t.native_id): t.name for t in threading.enumerate() if t.native_id is not None}
        threads[str(threading.get_native_id())] = threading.current_thread().name
        outcome["threads"] = threads
    except BaseException as error:  # reported on the calling thread
        outcome["error"] = error


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


def _metadata(target: Target, settings: CaptureSettings, threads: dict[str, str], torch_version: str) -> dict:
    from synchunt import __version__

    return {
        "target": target.name, "label": target.label, "params": dict(target.params), "device": target.device,
        "torch": torch_version, "python": platform.python_version(), "synchunt": __version__,
        "warmup": settings.warmup, "iterations": settings.iterations, "threads": threads,
        "profiled_thread": target.thread_name,
        "captured_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _unique_path(out_dir: Path, target: Target) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{target.name}-{target.label}-{stamp}")
    candidate = out_dir / f"{base}.pt.trace.json.gz"
    counter = 1
    while candidate.exists():  # never overwrite an earlier capture
        candidate = out_dir / f"{base}-{counter}.pt.trace.json.gz"
        counter += 1
    return candidate


def _write_gzip_with_metadata(raw_path: Path, final: Path, metadata: dict[str, Any]) -> None:
    # Splice our key in as the first member of the top-level object instead of re-serializing the trace.
    body = raw_path.read_bytes().lstrip()
    if not body.startswith(b"{"):
        raise TargetError("the profiler wrote an unexpected trace layout")
    header = b'{"' + SYNCHUNT_METADATA_KEY.encode() + b'": ' + json.dumps(metadata).encode() + b",\n"
    with gzip.open(final, "wb", compresslevel=6) as handle:
        handle.write(header)
        handle.write(body[1:])
