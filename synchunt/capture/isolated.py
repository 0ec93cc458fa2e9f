"""Capturing a target in a child process, as the CLI does: the target cannot take synchunt down with it.

A target that calls ``os._exit(0)``, crashes the interpreter, runs past a time limit or prints to stdout must
not decide the verdict or spoil a machine-readable document. The child resolves and profiles the target and
writes a small result file; its stdout goes to the parent's stderr (the target's prints stay visible, never in
a JSON or SARIF document); the parent turns every way the child can end into a trace or one ``TargetError``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from synchunt.capture.profiler import Capture, CaptureSettings
from synchunt.errors import SynchuntError, TargetError
from synchunt.printable import passed_on


@dataclass(frozen=True)
class TargetSpec:
    """What the child resolves: the CLI's target arguments, as text."""

    spec: str
    options: Mapping[str, str] = field(default_factory=dict)
    small: bool = False
    setup: str | None = None
    device: str | None = None
    project_root: str | None = None


def capture_isolated(target: TargetSpec, out_dir: Path, settings: CaptureSettings | None = None, *,
                     timeout_s: float | None = None) -> Capture:
    """Profile ``target`` in a child Python process; ``TargetError`` when it fails, exits early or times out."""
    settings = settings or CaptureSettings()
    out_dir = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="synchunt-child-") as scratch:
        result_path = Path(scratch) / "result.json"
        # The child imports as the parent would: the same import path (a caller may have extended it).
        request = {"target": asdict(target), "out_dir": str(out_dir.resolve()), "settings": asdict(settings),
                   "result": str(result_path), "sys_path": [p for p in sys.path if isinstance(p, str)],
                   "parent": os.getpid()}
        command = [sys.executable, "-m", "synchunt.capture.isolated", json.dumps(request)]
        try:
            returncode = _run_passing_output_on(command, timeout_s)
        except subprocess.TimeoutExpired:
            raise TargetError(f"target {target.spec!r} ran past --timeout {timeout_s:g} s; it was stopped") from None
        result = _read(result_path)
    if result is None:
        how = f"exited with status {returncode}" if returncode >= 0 else f"was killed by signal {-returncode}"
        raise TargetError(f"target {target.spec!r} {how} before returning (no trace was written; did it call "
                          "os._exit() or crash?)")
    if "error" in result:
        error_type = TargetError if result.get("kind") != "usage" else _usage_error()
        raise error_type(result["error"])
    return Capture(path=Path(result["path"]), metadata=result["metadata"], native_log=result.get("native_log", ""),
                   guard_records=tuple(result.get("guard_records", ())), notes=tuple(result.get("notes", ())))


def _run_passing_output_on(command: list[str], timeout_s: float | None) -> int:
    """Run the child, passing its stdout and stderr on to ours line by line as it prints (escape sequences shown,
    not sent to the terminal; no line able to forge a CI annotation); its exit status."""
    # In a session of its own, the child and whatever it starts (data loader workers, compile workers) can be
    # stopped together; Ctrl-C reaches this process, which stops them.
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             cwd=os.getcwd(), start_new_session=_POSIX)
    assert child.stdout is not None
    relay = threading.Thread(target=_relay, args=(child.stdout,), daemon=True)
    relay.start()
    try:
        returncode = child.wait(timeout=timeout_s)
    except BaseException:  # past the time limit, or Ctrl-C here: the child must not run on and write a trace later
        _stop(child)
        raise
    finally:
        relay.join(timeout=5)
    return returncode


_POSIX = os.name == "posix"


def _stop(child: subprocess.Popen[bytes]) -> None:
    """Kill the child and the processes it started (its session's group), then reap it."""
    if _POSIX:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
    child.kill()
    child.wait()


def _relay(pipe: IO[bytes]) -> None:
    for raw in iter(pipe.readline, b""):
        sys.stderr.write(passed_on(raw.decode(errors="replace")))
        sys.stderr.flush()
    pipe.close()


def _usage_error() -> type[SynchuntError]:
    from synchunt.errors import UsageError

    return UsageError


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _child(request: dict[str, Any]) -> None:
    """In the child: resolve, capture, write the result (or the error) for the parent."""
    from synchunt.capture import capture, resolve_target
    from synchunt.errors import UsageError

    result_path = Path(request["result"])
    spec = request["target"]
    sys.path[:0] = [p for p in request.get("sys_path", []) if p not in sys.path]
    try:
        resolved = resolve_target(spec["spec"], spec["options"], small=spec["small"], setup=spec["setup"],
                                  device=spec["device"], project_root=spec["project_root"])
        captured = capture(resolved, Path(request["out_dir"]), CaptureSettings(**request["settings"]))
        result: dict[str, Any] = {"path": str(captured.path), "metadata": captured.metadata,
                                  "native_log": captured.native_log, "guard_records": list(captured.guard_records),
                                  "notes": list(captured.notes)}
    except UsageError as error:
        result = {"error": str(error), "kind": "usage"}
    except SynchuntError as error:
        result = {"error": str(error), "kind": "target"}
    except BaseException as error:  # the parent turns it into one line; the child never prints a traceback
        result = {"error": f"target {spec['spec']!r} failed: {type(error).__name__}: {error}", "kind": "target"}
    result_path.write_text(json.dumps(result, default=str), encoding="utf-8")


def _die_with_parent(parent: int | None) -> None:
    """On Linux, be killed when the parent dies: in a session of its own, the child no longer gets the signals of
    the parent's process group (a terminal closing, `kill %1`), and a parent stopped by one must not leave it
    running to write a trace later."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent is not None and os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


_PR_SET_PDEATHSIG = 1


if __name__ == "__main__":
    _request = json.loads(sys.argv[1])
    _die_with_parent(_request.get("parent"))
    _child(_request)
