"""Latent syncs: catalogue ops in a CPU-only trace that would sync on a GPU."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from synchunt.detect.columns import Columns
from synchunt.detect.conditions import holds
from synchunt.detect.merge import Candidate, merge_by_anchor
from synchunt.detect.resolve import is_not_sync, resolve
from synchunt.rules import Rule
from synchunt.rules.index import latent_op_names, trace_ops_named
from synchunt.trace import Trace, vocab


def latent_syncs(trace: Trace, columns: Columns) -> list[Candidate]:
    concrete = trace.table.coded("concrete_inputs")
    latent = latent_op_names()
    ops = np.flatnonzero(columns.in_categories((vocab.CPU_OP,)) & columns.named(latent.__contains__))
    classes = columns.classes
    # per trace: each op name under each class of enclosing chain is judged once, each condition once per value
    verdicts = cache(lambda name, cls: _verdict(str(columns.name_vocabulary[name]), tuple(
        n for n, c in classes.links(cls) if c == vocab.CPU_OP)))
    recorded = cache(lambda conditions, code: any(
        holds(when, concrete.vocabulary[code] if code >= 0 else np.nan) for when in conditions))
    recorded_for = cache(lambda under, code: _anchor_holds(under, code, recorded))
    kept: list[tuple[int, Rule, str | None]] = []
    for i, name, cls, code in zip(ops.tolist(), columns.name_codes[ops].tolist(), classes.of(ops).tolist(),
                                  concrete.codes[ops].tolist(), strict=True):
        verdict = verdicts(name, cls)
        if verdict is None:
            continue
        conditions, rule, under = verdict
        # every matching pattern has a condition on the recorded arguments: one must hold
        if None not in conditions and not recorded(conditions, code):
            continue
        kept.append((i, rule, under))
    rows = np.fromiter((i for i, _, _ in kept), dtype=np.int64, count=len(kept))
    anchors = _anchors(columns, rows, [under for _, _, under in kept])
    # A read charged to an op whose every pattern has a condition counts only where one holds for that call:
    # `one_hot(t, num_classes=n)` reads `t` in its CPU kernel's range checks alone, `one_hot(t)` once on a GPU.
    charged = [anchor < 0 or recorded_for(under, concrete.codes[anchor])
               for (_, _, under), anchor in zip(kept, anchors.tolist(), strict=True)]
    if not all(charged):
        kept = [candidate for candidate, ok in zip(kept, charged, strict=True) if ok]
        rows, anchors = rows[charged], anchors[charged]
    # A catalogue op that encloses another candidate is explained by it (count the innermost only).
    is_candidate = np.zeros(len(columns.parent), dtype=bool)
    is_candidate[rows] = True
    enclosing = columns.nearest(rows, is_candidate, strict=True)
    explained = set(enclosing[enclosing >= 0].tolist())
    names = columns.name_vocabulary[columns.name_codes[rows]].tolist()
    return merge_by_anchor([
        Candidate(event=i, rule=rule.code, confirmed=False, op=str(name), runtime=[], runtime_events=[], ts_us=ts,
                  stall_us=dur, stall_source="op cpu time (latent)", direction=None, anchor=anchor)
        for (i, rule, _), name, ts, dur, anchor in zip(kept, names, columns.ts[rows].astype(float).tolist(),
                                                       columns.dur[rows].astype(float).tolist(), anchors.tolist(),
                                                       strict=True)
        if i not in explained])


def _anchor_holds(under: str | None, code: int, recorded: Callable[[tuple[str, ...], int], bool]) -> bool:
    """Whether the op a sync is charged to syncs on this call: always, unless each of its latent patterns has a
    condition on its recorded arguments (``code``) and none holds."""
    conditions = _anchor_conditions(under) if under else ()
    return not conditions or None in conditions or recorded(conditions, code)


@cache
def _anchor_conditions(op: str) -> tuple[str | None, ...]:
    return tuple(p.when for p, _ in trace_ops_named(op) if p.latent and p.under is None)


def _anchors(columns: Columns, rows: np.ndarray, unders: list[str | None]) -> np.ndarray:
    """Each row's nearest enclosing event named ``under`` (the op its sync is charged to); -1 for none."""
    anchors = np.full(len(rows), -1, dtype=np.int64)
    by_name: dict[str, list[int]] = {}
    for position, under in enumerate(unders):
        if under:
            by_name.setdefault(under, []).append(position)
    for under, positions in by_name.items():
        anchors[positions] = columns.nearest(rows[positions], columns.named(under.__eq__), strict=True)
    return anchors


def _verdict(name: str, enclosing: tuple[str, ...]) -> tuple[tuple[str | None, ...], Rule, str | None] | None:
    """For an op under these enclosing ops (innermost first): the conditions of its matching latent patterns
    (``None``: unconditional), its rule and the op it is charged to; ``None`` when it is no latent sync there.
    Depends on names only."""
    if is_not_sync(name, enclosing):
        return None
    conditions = tuple(p.when for p, _ in trace_ops_named(name)
                       if p.latent and (p.under is None or p.under in enclosing))
    if not conditions:
        return None
    rule, under = resolve(name, enclosing, latent_only=True)
    if rule is None:
        return None
    return conditions, rule, under
