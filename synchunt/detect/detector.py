"""Find syncs in a trace: confirmed from runtime evidence, latent from catalogue ops on CPU-only traces."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
import pandas as pd

from synchunt.detect import resolve as catalogue
from synchunt.detect.conditions import holds
from synchunt.rules import Rule
from synchunt.trace import Trace, vocab
from synchunt.trace.tree import ancestors


class Mode(str, Enum):
    AUTO = "auto"
    CONFIRMED = "confirmed"
    LATENT = "latent"


SYNC_COLUMNS = ["event", "rule", "kind", "confirmed", "op", "runtime", "runtime_events", "ts", "stall_us",
                "stall_source", "direction", "pid", "tid"]


@dataclass(frozen=True)
class Detection:
    mode: Mode
    syncs: pd.DataFrame  # SYNC_COLUMNS, one row per sync


def effective_mode(trace: Trace, mode: Mode | str) -> Mode:
    mode = Mode(mode)
    if mode is Mode.AUTO:
        return Mode.CONFIRMED if trace.device_activity else Mode.LATENT
    return mode


def detect(trace: Trace, mode: Mode | str = Mode.AUTO) -> Detection:
    """Every sync in ``trace``. ``auto`` confirms on traces with device activity, else reports latent syncs."""
    chosen = effective_mode(trace, mode)
    rows = _confirmed(trace) if chosen is Mode.CONFIRMED else _latent(trace)
    return Detection(mode=chosen, syncs=pd.DataFrame(rows, columns=SYNC_COLUMNS))


def _names(trace: Trace) -> np.ndarray:
    return trace.events["name"].astype(str).to_numpy(dtype=object)



def _confirmed(trace: Trace) -> list[dict]:
    events = trace.events
    names = _names(trace)
    cats = events["cat"].astype(str).to_numpy(dtype=object)
    parent = events["parent"].to_numpy()
    correlation = events["correlation"].to_numpy()
    runtime = cats == vocab.RUNTIME

    memcpy_by_corr = _activity_by_correlation(events, names, cats, vocab.MEMCPY)
    sync_kind_by_corr = {int(c): str(k) for c, k in zip(correlation[cats == vocab.CUDA_SYNC],
                                                       events["sync_kind"].to_numpy()[cats == vocab.CUDA_SYNC],
                                                       strict=True) if c >= 0}
    blocking: list[int] = []
    for i in np.flatnonzero(runtime).tolist():
        name = names[i]
        if name in vocab.NON_BLOCKING_CALLS:
            continue
        corr = int(correlation[i])
        if name in vocab.BLOCKING_RUNTIME_CALLS or (
                name in vocab.ASYNC_COPY_CALLS and _blocks_host(memcpy_by_corr.get(corr, ""))) or (
                sync_kind_by_corr.get(corr) in vocab.BLOCKING_SYNC_KINDS):
            blocking.append(i)

    trace_ops = catalogue.trace_ops()
    groups: dict[int, list[int]] = {}
    for i in blocking:
        cause = next((a for a in ancestors(parent, i) if names[a] in trace_ops and cats[a] == vocab.CPU_OP), i)
        groups.setdefault(cause, []).append(i)

    issued_memcpys = _memcpys_by_issuer(parent, runtime, correlation, memcpy_by_corr)
    ts, dur, pid, tid = (events[c].to_numpy() for c in ("ts", "dur", "pid", "tid"))
    rows = []
    for cause, calls in groups.items():
        call_names = [names[c] for c in calls]
        direction = _direction([memcpy_by_corr.get(int(correlation[c]), "") for c in calls]
                               + issued_memcpys.get(cause, []))
        only_async_copies = all(n in vocab.ASYNC_COPY_CALLS for n in call_names)
        rule: Rule | None
        anchor = -1
        if cause in calls:  # no catalogue op encloses the call: explicit sync or raw copy
            rule = catalogue.get_pageable_rule() if only_async_copies else catalogue.rule_for_runtime_call(names[cause])
            if rule is None:
                rule = catalogue.rule_for_sync_kind(sync_kind_by_corr.get(int(correlation[cause]), ""))
        elif names[cause] in catalogue.COPY_OPS and only_async_copies:
            rule = catalogue.get_pageable_rule()
        else:
            chain = ancestors(parent, cause)
            enclosing_names = [names[a] for a in chain]
            rule, under = catalogue.resolve_anchored(names[cause], enclosing_names, direction=direction)
            anchor = _nearest(chain, names, under)
            if rule is None and names[cause] in catalogue.COPY_OPS:
                rule = catalogue.rule_for_runtime_call("cudaMemcpy")
        if rule is None:
            continue
        stall = float(dur[calls].sum())
        rows.append({
            "event": cause, "rule": rule.code, "kind": rule.kind.value, "confirmed": True, "op": names[cause],
            "runtime": " + ".join(dict.fromkeys(call_names)), "runtime_events": calls,
            "ts": float(ts[calls[0]]), "stall_us": stall, "stall_source": "runtime call",
            "direction": direction, "pid": pid[cause], "tid": tid[cause],
            "anchor": anchor,
        })
    return _merge_anchored(rows)


def _latent(trace: Trace) -> list[dict]:
    events = trace.events
    names = _names(trace)
    cats = events["cat"].astype(str).to_numpy(dtype=object)
    parent = events["parent"].to_numpy()
    concrete = events["concrete_inputs"].to_numpy()
    patterns = catalogue.latent_patterns()
    candidates: dict[int, tuple[Rule, int]] = {}
    for i in np.flatnonzero((cats == vocab.CPU_OP) & np.isin(names, list(patterns))).tolist():
        chain = ancestors(parent, i)
        enclosing_names = [names[a] for a in chain]
        if catalogue.is_not_sync(names[i], enclosing_names):
            continue
        matching = [(p, r) for p, r in patterns[names[i]] if p.under is None or p.under in enclosing_names]
        if not any(holds(p.when, concrete[i]) for p, _ in matching):
            continue
        rule, under = catalogue.resolve_anchored(names[i], enclosing_names, latent_only=True)
        if rule is not None:
            candidates[i] = (rule, _nearest(chain, names, under))
    # A catalogue op that encloses another candidate is explained by it (count the innermost only).
    enclosing = {a for i in candidates for a in ancestors(parent, i)}
    ts, dur, pid, tid = (events[c].to_numpy() for c in ("ts", "dur", "pid", "tid"))
    rows = []
    for i, (rule, anchor) in candidates.items():
        if i in enclosing:
            continue
        rows.append({
            "event": i, "rule": rule.code, "kind": rule.kind.value, "confirmed": False, "op": names[i],
            "runtime": "", "runtime_events": [], "ts": float(ts[i]),
            "stall_us": float(dur[i]), "stall_source": "op cpu time (latent)", "direction": None,
            "pid": pid[i], "tid": tid[i], "anchor": anchor,
        })
    return _merge_anchored(rows)


def _nearest(chain: list[int], names: np.ndarray, name: str | None) -> int:
    """The nearest enclosing event called ``name`` (-1 when none, or no name)."""
    if name is None:
        return -1
    return next((a for a in chain if names[a] == name), -1)


def _merge_anchored(rows: list[dict]) -> list[dict]:
    """One sync per call of the op a read is charged to: ``repeat_interleave`` reads its repeats' sum and checks
    them (two host reads) but is one sync of the user's code; the stall adds up."""
    merged: list[dict] = []
    by_anchor: dict[int, dict] = {}
    for row in sorted(rows, key=lambda r: r["ts"]):
        anchor = row.pop("anchor")
        first = by_anchor.get(anchor) if anchor >= 0 else None
        if first is None:
            merged.append(row)
            if anchor >= 0:
                by_anchor[anchor] = row
            continue
        first["stall_us"] += row["stall_us"]
        first["runtime_events"] = first["runtime_events"] + row["runtime_events"]
        names = [n for n in (first["runtime"] + " + " + row["runtime"]).split(" + ") if n]
        first["runtime"] = " + ".join(dict.fromkeys(names))
    return merged


def _activity_by_correlation(events: pd.DataFrame, names: np.ndarray, cats: np.ndarray,
                             category: str) -> dict[int, str]:
    mask = cats == category
    return {int(c): str(n) for c, n in zip(events["correlation"].to_numpy()[mask], names[mask], strict=True)
            if c >= 0}


def _memcpys_by_issuer(parent: np.ndarray, runtime: np.ndarray, correlation: np.ndarray,
                       memcpy_by_corr: dict[int, str]) -> dict[int, list[str]]:
    """Each op → the copy activities issued by runtime calls at most four levels below it (one pass)."""
    issued: dict[int, list[str]] = {}
    for i in np.flatnonzero(runtime).tolist():
        name = memcpy_by_corr.get(int(correlation[i]))
        if not name:
            continue
        current = int(parent[i])
        for _ in range(4):
            if current < 0:
                break
            issued.setdefault(current, []).append(name)
            current = int(parent[current])
    return issued


def _blocks_host(memcpy_name: str) -> bool:
    # cudaMemcpyAsync into pageable host memory returns only when the copy is done (it waits for the stream);
    # from pageable memory to the device it returns once the data is staged, without waiting for the device.
    return "DtoH" in memcpy_name and "Pageable" in memcpy_name


def _direction(memcpy_names: list[str]) -> str | None:
    for name in memcpy_names:
        for direction in ("DtoH", "HtoD", "DtoD", "HtoH"):
            if direction in name:
                return direction
    return None
