"""Running hostile cases: each in its own child with a wall-clock timeout and a memory cap.

A pool of warm workers (fresh interpreters that imported ``synchunt.cli`` once) regenerates the corpus from the
seed and, per case, builds the case folder and runs the case in a capped child (see ``hostile_child``): what
hangs or grows is the child, never the pool.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from hostile_case import Case, digest
from hostile_child import CHILD_ENV, run_child, warm_up
from hostile_judge import Run, judge

MEMORY_CAP = 1 << 30  # bytes a case may allocate beyond the warm interpreter
PROCESS_BASE = 512 << 20  # what a fresh interpreter with synchunt and torch imported holds, with room to spare


@dataclass
class Result:
    id: str
    family: str
    kind: str
    detail: str
    exit_code: int | None
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    stderr_tail: str

    def as_dict(self) -> dict:
        return asdict(self)


def run_cases(case_ids: Iterable[str], *, seed: int, workers: int = 2, root: Path, keep: bool = False,
              timeout_scale: float = 1.0, on_result: Callable[[Result], None] | None = None) -> list[Result]:
    """Run the named cases of the corpus made from ``seed`` on ``workers`` warm workers, in ``root``.

    ``timeout_scale`` multiplies every case's timeout (for a loaded machine)."""
    pending: queue.Queue[str | None] = queue.Queue()
    ids = list(case_ids)
    for case_id in ids:
        pending.put(case_id)
    results: list[Result] = []
    lock = threading.Lock()
    errors: list[str] = []

    def work(index: int) -> None:
        folder = root / f"w{index}"
        folder.mkdir(parents=True, exist_ok=True)
        serve = [sys.executable, str(Path(__file__).resolve()), "--serve", str(seed), str(folder),
                 "1" if keep else "0", str(timeout_scale)]
        proc = subprocess.Popen(serve, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                env={**os.environ, **CHILD_ENV})
        try:
            while True:
                try:
                    case_id = pending.get_nowait()
                except queue.Empty:
                    break
                proc.stdin.write(case_id + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                if not line:
                    errors.append(f"worker {index} died on case {case_id}")
                    break
                result = Result(**json.loads(line))
                with lock:
                    results.append(result)
                    if on_result:
                        on_result(result)
        finally:
            proc.stdin.close()
            proc.wait()

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(max(1, workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError("; ".join(errors))
    order = {case_id: i for i, case_id in enumerate(ids)}
    return sorted(results, key=lambda r: order[r.id])


def _serve(seed: int, root: Path, keep: bool, timeout_scale: float) -> None:
    """The worker: read case ids on stdin, answer one JSON result per line on the original stdout."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import hostile

    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # children inherit a clean stdout; the protocol has its own descriptor
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the worker
    warm_up(root / "warm", _warm_inputs())
    cases = {case.id: case for case in hostile.all_cases(seed)}
    for number, line in enumerate(sys.stdin):
        case = cases[line.strip()]
        case = replace(case, timeout_s=case.timeout_s * timeout_scale)
        try:
            result = run_one(case, root / f"c{number}")
        except Exception:  # a harness bug must not look like a product failure
            result = Result(case.id, case.family, "harness error", traceback.format_exc()[-500:], None, 0.0, 0.0, 0.0,
                            "")
        if not keep:
            shutil.rmtree(root / f"c{number}", ignore_errors=True)
        protocol.write(json.dumps(result.as_dict()) + "\n")


def _warm_inputs() -> dict[str, bytes]:
    import hostile_fam_forged
    import hostile_kineto

    return {"t.json": hostile_kineto.dumps(hostile_kineto.cpu_doc()), "b.toml": hostile_fam_forged.BASELINE.encode(),
            "saved.json": json.dumps(hostile_fam_forged.analysis_doc()).encode(),
            "src.py": b"import torch\n\ndef f(x):\n    for i in range(3):\n        v = x.sum().item()\n"}


def run_one(case: Case, folder: Path) -> Result:
    """Build ``case`` in ``folder``/work, run it, judge it."""
    work = folder / "work"
    work.mkdir(parents=True)
    case.build(work)
    before = {name: digest(work / name) for name in case.expect.unchanged}
    old = {name: digest(work / name) for name in case.expect.replaced}
    existing = set(_plain_files(work))
    fresh = case.isolation == "process"  # a fresh interpreter starts from nothing, a fork from this worker
    rss_cap_mb = ((PROCESS_BASE if fresh else _status_bytes("VmRSS")) + MEMORY_CAP) / 2**20
    started = time.monotonic()
    finished = run_child(case, work, (PROCESS_BASE if fresh else _status_bytes("VmData")) + MEMORY_CAP)
    wall = time.monotonic() - started
    status = finished.status
    run = Run(exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
              signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None, timed_out=finished.timed_out,
              why=finished.why,
              wall_s=wall, cpu_s=finished.rusage.ru_utime + finished.rusage.ru_stime,
              peak_rss_mb=finished.rusage.ru_maxrss / 1024, memory_cap_mb=rss_cap_mb,
              stdout=finished.stdout, stderr=finished.stderr,
              changed=[name for name, sha in before.items() if digest(work / name) != sha],
              kept=[name for name, sha in old.items() if digest(work / name) == sha],
              oversized=[str(p.relative_to(work)) for p in _plain_files(work)
                         if p not in existing and p.stat().st_size > case.expect.max_file_bytes])
    kind, detail = judge(case, run)
    (folder / "stdout").write_bytes(run.stdout)  # kept with --keep, beside the case's own files
    (folder / "stderr").write_bytes(run.stderr)
    (folder / "case.txt").write_text(f"{case.id}\nsynchunt {' '.join(case.argv)!r}\n{kind}: {detail}\n")
    tail = run.stderr.decode("utf-8", "replace")[-300:]
    return Result(case.id, case.family, kind, detail, run.exit_code, round(wall, 3), round(run.cpu_s, 3),
                  round(run.peak_rss_mb, 1), tail)


def _status_bytes(field: str) -> int:
    """A size from /proc/self/status (``VmData``, ``VmRSS``) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _plain_files(folder: Path) -> list[Path]:
    """Regular files under ``folder``, without following links (cases build symlink loops on purpose)."""
    found = []
    for top, _dirs, names in os.walk(folder):
        for name in names:
            path = Path(top) / name
            if path.is_file() and not path.is_symlink():
                found.append(path)
    return found


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
    _serve(int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4] == "1", float(sys.argv[5]))
