"""One capped child per case: forked from a warm interpreter, or a fresh ``python -m synchunt`` process.

The child's memory is capped with ``RLIMIT_DATA`` (private writable memory: heap and anonymous maps, which is what
a runaway decoder grows), its streams are pipes the parent drains while it waits (so a case may write gigabytes
without blocking, and ``RLIMIT_FSIZE`` cases still get their messages out), and on the deadline its whole process
group is killed.
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from hostile_case import Case

CHILD_ENV = {"COLUMNS": "120", "TERM": "dumb", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1",
             "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
STREAM_LIMIT = 256 << 20
BLOCKED_WINDOWS = 3  # bytes kept per stream; the rest is read and counted, not kept


@dataclass
class Finished:
    status: int
    rusage: resource.struct_rusage
    timed_out: bool
    why: str  # why the deadline killed it
    stdout: bytes
    stderr: bytes


def arguments(case: Case, work: Path) -> list[str]:
    return [arg.replace("{dir}", str(work)) for arg in case.argv]


def run_child(case: Case, work: Path, cap: int) -> Finished:
    """Run ``case`` in ``work`` under a memory cap of ``cap`` bytes of private data; wait at most its timeout."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    if case.isolation == "process":
        proc = subprocess.Popen([sys.executable, *case.program, *arguments(case, work)], cwd=work,
                                env={**os.environ, **CHILD_ENV}, stdin=subprocess.DEVNULL, stdout=out_w,
                                stderr=err_w, preexec_fn=lambda: _limit(case, cap), start_new_session=True)
        proc.returncode = 0  # reaped below with wait4 (for its rusage), not by Popen
        pid = proc.pid
    else:
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(case, work, cap, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    return _collect(pid, out_r, err_r, case.timeout_s)


def _child(case: Case, work: Path, cap: int, out_w: int, err_w: int) -> None:
    code = 70
    try:
        os.setpgrp()  # a target's own children die with it on a timeout
        os.chdir(work)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - the child's own streams
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        os.environ.update(CHILD_ENV)
        _limit(case, cap)
        sys.argv = ["synchunt", *arguments(case, work)]
        code = _call_main()
    finally:
        os._exit(code & 0xFF)


# One run of each command on benign inputs before serving: the lazy imports and first-call work then happen once
# in the worker, not in every forked child (a cold first call costs ~0.4 s, a warm one ~0.1 s).
WARM_COMMANDS = (("analyze", "t.json", "-f", "json"), ("analyze", "t.json"), ("analyze", "t.json", "-f", "csv"),
                 ("gate", "t.json"), ("gate", "t.json", "-f", "github"), ("gate", "t.json", "-f", "sarif"),
                 ("gate", "t.json", "-f", "junit"), ("gate", "t.json", "--baseline", "b.toml"),
                 ("compare", "t.json", "t.json"), ("compare", "t.json", "t.json", "-f", "json"),
                 ("report", "t.json", "-o", "r.html"), ("analyze", "saved.json", "-f", "json"),
                 ("gate", "saved.json"), ("lint", "src.py"), ("lint", "src.py", "-f", "json"))


def warm_up(folder: Path, inputs: dict[str, bytes]) -> None:
    """Run :data:`WARM_COMMANDS` in this process on ``inputs``, every output discarded, each under an alarm."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in inputs.items():
        (folder / name).write_bytes(data)
    saved = os.dup(1), os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    cwd = os.getcwd()
    argv = sys.argv
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.chdir(folder)
        for command in WARM_COMMANDS:
            sys.argv = ["synchunt", *command]
            signal.alarm(30)
            _call_main()
            signal.alarm(0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        sys.argv = argv
        os.chdir(cwd)
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError("warm-up command took too long")


def _call_main() -> int:
    """The console-script entry point as the interpreter runs it: an uncaught exception is a traceback and 1."""
    try:
        from synchunt.cli import main

        main()
        code = 0
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            code = exit_.code or 0
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return code


def _limit(case: Case, cap: int) -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if case.file_size_limit is not None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (case.file_size_limit, case.file_size_limit))


class _Deadline:
    """A case's budget is ``timeout`` seconds of CPU; wall time alone only catches a child that is blocked.

    At the wall deadline a child still gaining CPU is starved by a loaded machine, not hung: it gets another second
    at a time, up to three times the timeout, as long as its CPU stays under the timeout. One that gains no CPU for
    :data:`BLOCKED_WINDOWS` seconds in a row is blocked (a FIFO, a lock); one quiet second proves nothing on a
    loaded machine.
    """

    def __init__(self, pid: int, timeout: float) -> None:
        now = time.monotonic()
        self.pid, self.timeout = pid, timeout
        self.start, self.soft, self.hard = now, now + timeout, now + 3 * timeout + BLOCKED_WINDOWS
        self.last_cpu = 0.0
        self.quiet = 0  # seconds past the deadline without CPU progress
        self.reason = ""

    def left(self) -> float:
        return self.soft - time.monotonic()

    def expired(self) -> bool:
        now = time.monotonic()
        if now < self.soft:
            return False
        cpu = _cpu_seconds(self.pid)
        if cpu is None:
            return True
        if cpu >= self.timeout:
            self.reason = f"used its {self.timeout:g} s of CPU"
            return True
        if now >= self.hard:
            self.reason = f"starved: {cpu:.1f} s of CPU in {now - self.start:.0f} s"
            return True
        progressing, self.last_cpu = cpu - self.last_cpu > 0.05, cpu
        self.quiet = 0 if progressing else self.quiet + 1
        if self.quiet >= BLOCKED_WINDOWS:
            self.reason = f"blocked: no CPU for {self.quiet} s after {cpu:.1f} s of CPU"
            return True
        self.soft = now + 1.0
        return False

    def after_exit(self) -> None:
        """The child is gone; a grandchild may still hold the pipes, but not for long."""
        self.soft = self.hard = min(self.soft, time.monotonic() + 2.0)
        self.timeout = 0.0


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a live process, from /proc (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _collect(pid: int, out_r: int, err_r: int, timeout: float) -> Finished:
    """Drain both pipes until the child exits and they close (or the deadline kills its group), then reap it."""
    deadline = _Deadline(pid, timeout)
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    kept = {out_r: 0, err_r: 0}
    selector = selectors.DefaultSelector()
    for fd in (out_r, err_r):
        selector.register(fd, selectors.EVENT_READ)
    timed_out = False
    reaped: tuple[int, resource.struct_rusage] | None = None
    while selector.get_map() or reaped is None:
        if deadline.expired():
            timed_out = reaped is None
            _kill_group(pid)  # the group still has a member (the child or a grandchild): its id is still ours
            break
        if selector.get_map():
            for key, _ in selector.select(timeout=min(max(deadline.left(), 0.0), 0.05)):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    selector.unregister(key.fd)
                elif kept[key.fd] < STREAM_LIMIT:
                    chunks[key.fd].append(data)
                    kept[key.fd] += len(data)
        else:
            time.sleep(0.01)
        if reaped is None:
            done, status, rusage = os.wait4(pid, os.WNOHANG)
            if done:
                reaped = (status, rusage)
                deadline.after_exit()
    selector.close()
    os.close(out_r)
    os.close(err_r)
    if reaped is None:
        _, status, rusage = os.wait4(pid, 0)
        reaped = (status, rusage)
    return Finished(status=reaped[0], rusage=reaped[1], timed_out=timed_out, why=deadline.reason,
                    stdout=b"".join(chunks[out_r]), stderr=b"".join(chunks[err_r]))


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
