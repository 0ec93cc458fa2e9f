"""Write the ground truth of every real-client target: ``truth/<target>.json`` (cpu_path and cuda_path counts).

    .venv/bin/python benchmarks/real_clients/make_truth.py            # every target
    .venv/bin/python benchmarks/real_clients/make_truth.py tv_ssdlite # one
    .venv/bin/python benchmarks/real_clients/make_truth.py --check    # regenerate in memory, compare with the files

Each target is loaded from its file as ``python file.py`` would, set up, stepped once (warm-up, not recorded), then
recorded by the instrument (``instrument.py``) over two steps, which must agree (a target is deterministic). The
``cpu_path`` count of a sync is what the CPU run does per step: what a latent analysis of a CPU trace should
report. The ``cuda_path`` count is what a GPU run would do per step, from a third step run with the device
branches of ``cuda_branches.py`` in place, under these rules:

- a read of host memory by design (a tensor made by ``.cpu()``/``.to("cpu")``, or by ``torch.tensor``/
  ``as_tensor``/``from_numpy`` without a device, or derived only from such tensors) waits for nothing on a GPU;
- a host-to-device copy (``torch.tensor(data, device=d)``, ``host_tensor.to(d)``) is a no-op on a CPU run but a
  blocking copy on a GPU one (``copy_`` without ``non_blocking`` is ``cudaMemcpyAsync`` + ``cudaStreamSynchronize``);
- ``torchvision::nms`` is one sync per call on both paths: on CUDA its kernel copies the IoU mask to the host and
  the kept indices back with a blocking copy (two host waits of one call, as a trace charges them to the call);
  on CPU nothing shows but the op (the catalogue entry);
- what review.toml drops, and what it adds (a GPU run's own branch no CPU run enters), each with its reason.

Never imports synchunt.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TARGETS = HERE / "targets"
TRUTH = HERE / "truth"
sys.path.insert(0, str(HERE))

STEPS_CHECKED = 2
# One call, several host waits on a GPU run: still one sync (the unit of every count), with the reason said.
CUDA_WAITS_WHY = {"library-nms": "one sync per call: on CUDA its kernel copies the IoU mask to the host and the "
                                 "kept indices back (two host waits of one call; see README.md)"}
CPU_ONLY_ABSENT = {"host-to-device"}  # no-ops on a CPU run: never in cpu_path


def target_names() -> list[str]:
    return sorted(p.stem for p in TARGETS.glob("*.py"))


def load(name: str) -> Any:
    path = TARGETS / f"{name}.py"
    sys.path.insert(0, str(TARGETS))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def file_name(filename: str) -> str:
    """A frame's file as the truth names it: relative to site-packages for a library, to the repository else."""
    marker = f"{os.sep}site-packages{os.sep}"
    if marker in filename:
        return filename.rsplit(marker, 1)[1]
    try:
        return str(Path(filename).resolve().relative_to(REPO))
    except ValueError:
        return filename


def _key(event: Any) -> tuple[Any, ...]:
    site = event.site
    via = event.via
    return (event.kind, event.op,
            file_name(site.file) if site else None, site.line if site else None, site.function if site else None,
            file_name(via.file) if via else None, via.line if via else None, event.host_operands)


def record_steps(module: Any, state: Any, steps: int, branches: list[str]) -> list[Counter[tuple[Any, ...]]]:
    from cuda_branches import cuda_branches
    from instrument import SyncRecorder

    counts = []
    with cuda_branches(branches):
        for _ in range(steps):
            with SyncRecorder(module.__file__) as recorder:
                module.step(state)
            counts.append(Counter(_key(e) for e in recorder.events))
    return counts


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("torch", "torchvision", "transformers", "diffusers", "sentence-transformers", "tokenizers"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            continue
    return found


def truth_for(name: str, review: dict[str, Any]) -> dict[str, Any]:
    settings = review["targets"][name]
    module = load(name)
    state = module.setup()
    module.step(state)  # warm-up: first-call initialization is not steady state
    cpu_runs = record_steps(module, state, STEPS_CHECKED, [])
    if any(run != cpu_runs[0] for run in cpu_runs[1:]):
        raise SystemExit(f"{name}: the recorded steps differ; a target must be deterministic")
    (cuda_run,) = record_steps(module, state, 1, settings.get("branches", []))
    drops = {(d["site"], d["kind"]): d["why"] for d in settings.get("drop", [])}

    rows: dict[tuple[Any, ...], dict[str, Any]] = {}

    def row(key: tuple[Any, ...]) -> dict[str, Any]:
        kind, op, site_file, site_line, function, via_file, via_line, _host = key
        short = (kind, op, site_file, site_line, via_file, via_line)
        if short not in rows:
            rows[short] = {"site": f"{site_file}:{site_line}", "function": function,
                           "via": f"{via_file}:{via_line}" if via_file else None, "kind": kind, "op": op,
                           "library": not str(op).startswith(("aten::", "Tensor.", "torch.")),
                           "cpu_path": 0, "cuda_path": 0, "cuda_why": []}
        return rows[short]

    for key, count in cpu_runs[0].items():
        if key[0] not in CPU_ONLY_ABSENT:
            row(key)["cpu_path"] += count
    for key, count in cuda_run.items():
        entry = row(key)
        kind, host = key[0], key[-1]
        dropped = drops.get((entry["site"], kind))
        if host:
            _why(entry, "reads host memory by design (made by .cpu()/.to('cpu') or from host data without a "
                        "device): no device wait on a GPU")
        elif dropped:
            _why(entry, " ".join(dropped.split()))
        else:
            entry["cuda_path"] += count
            if kind in CUDA_WAITS_WHY:
                _why(entry, CUDA_WAITS_WHY[kind])
            if kind in CPU_ONLY_ABSENT:
                _why(entry, "a no-op on a CPU run; a blocking host-to-device copy (copy_ without non_blocking: "
                            "cudaMemcpyAsync + cudaStreamSynchronize) on a GPU one")
    for added in settings.get("add", []):  # what only a GPU run does and no CPU run shows (a device branch)
        site_file, _, site_line = added["site"].rpartition(":")
        via_file, _, via_line = added["via"].rpartition(":")
        entry = row((added["kind"], added["op"], site_file, int(site_line), added["function"], via_file,
                     int(via_line), False))
        entry["cuda_path"] += int(added["cuda_path"])
        _why(entry, " ".join(added["why"].split()))
    for entry in rows.values():
        if entry["cpu_path"] and not entry["cuda_path"] and not entry["cuda_why"]:
            _why(entry, "not reached on CUDA: " + "; ".join(
                f"{b}: {_branch_why(b)}" for b in settings.get("branches", [])))
        entry["cuda_why"] = "; ".join(entry["cuda_why"]) or None
    syncs = sorted(rows.values(), key=lambda r: (r["site"].rsplit(":", 1)[0], int(r["site"].rsplit(":", 1)[1]),
                                                 r["via"] or "", r["kind"]))
    return {"schema": "real-clients-truth/1", "target": name, "file": file_name(module.__file__),
            "library": settings["library"], "versions": versions(), "steps_checked": STEPS_CHECKED,
            "branches": settings.get("branches", []),
            "totals": {"cpu_path": sum(r["cpu_path"] for r in syncs), "cuda_path": sum(r["cuda_path"] for r in syncs)},
            "syncs": syncs}


def load_review() -> dict[str, Any]:
    return tomllib.loads((HERE / "review.toml").read_text())


def _why(entry: dict[str, Any], text: str) -> None:
    if text not in entry["cuda_why"]:
        entry["cuda_why"].append(text)


def _branch_why(name: str) -> str:
    from cuda_branches import BRANCHES

    return f"{BRANCHES[name].where}: {BRANCHES[name].why}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="target names (default: all)")
    parser.add_argument("--check", action="store_true", help="compare with the stored truth instead of writing")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    review = load_review()
    TRUTH.mkdir(exist_ok=True)
    stale = []
    for name in args.targets or target_names():
        truth = truth_for(name, review)
        text = json.dumps(truth, indent=1) + "\n"
        path = TRUTH / f"{name}.json"
        if args.check:
            stored = json.loads(path.read_text()) if path.exists() else None
            same = stored is not None and stored["syncs"] == truth["syncs"]
            print(f"{name}: {'same' if same else 'DIFFERS'}")
            stale += [] if same else [name]
        else:
            path.write_text(text)
            print(f"{name}: cpu_path {truth['totals']['cpu_path']}, cuda_path {truth['totals']['cuda_path']} "
                  f"per step -> {path.relative_to(REPO)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
