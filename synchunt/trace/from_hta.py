"""A :class:`Trace` from Holistic Trace Analysis' parse: its ``TraceAnalysis`` or one rank's DataFrame.

HTA (``hta``, published as ``traceinsight``) is optional: nothing here imports it, the objects it hands over
are read by attribute. HTA stores ``name`` and ``cat`` as ids into its symbol table, timestamps relative to
the earliest event of all ranks (``min_ts``), and keeps complete events only: thread names, flows and instants
are gone, as are ``Concrete Inputs`` and ``Call stack`` (so latent conditions and stacks fall back to their
defaults). ``cuda_sync`` events keep their kind as their name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synchunt.errors import TraceError
from synchunt.trace import vocab
from synchunt.trace.columns import code_values, id_column
from synchunt.trace.decode import DecodedTrace
from synchunt.trace.model import Trace, build
from synchunt.trace.table import INT_KEYS


def trace_from_hta(source: Any, rank: int | None = None, *, symbols: Any = None, min_ts: float | None = None,
                   metadata: dict[str, Any] | None = None, path: str | Path | None = None) -> Trace:
    """Build a synchunt trace from HTA's parse of one rank.

    ``source`` is a ``hta.trace_analysis.TraceAnalysis`` (or its ``.t``, an ``hta.common.trace.Trace``), in which
    case ``rank`` defaults to its first rank and the symbol table, ``min_ts``, metadata and file come from it; or
    one rank's DataFrame (``TraceAnalysis.t.get_trace(rank)``), with ``symbols`` (HTA's ``TraceSymbolTable`` or
    its list of names) and ``min_ts`` to restore absolute times. Raises :class:`TraceError` for anything else.
    """
    hta_trace = getattr(source, "t", source)
    if isinstance(source, pd.DataFrame):
        frame = source
        if symbols is None:
            raise TraceError("an HTA DataFrame needs its symbol table (symbols=...) to decode names")
    elif hasattr(hta_trace, "get_trace") and hasattr(hta_trace, "symbol_table"):
        ranks = sorted(getattr(hta_trace, "traces", {}) or {})
        rank = rank if rank is not None else (ranks[0] if ranks else 0)
        if ranks and rank not in ranks:
            raise TraceError(f"HTA has no rank {rank} (ranks: {', '.join(map(str, ranks))})")
        frame = hta_trace.get_trace(rank)
        symbols = hta_trace.symbol_table if symbols is None else symbols
        min_ts = float(getattr(hta_trace, "min_ts", 0) or 0) if min_ts is None else min_ts
        metadata = (getattr(hta_trace, "meta_data", {}) or {}).get(rank, {}) if metadata is None else metadata
        path = path if path is not None else (getattr(hta_trace, "trace_files", {}) or {}).get(rank)
    else:
        raise TraceError(f"not an HTA TraceAnalysis, Trace or DataFrame: {type(source).__name__}")
    decoded = DecodedTrace(columns=_columns(frame, _names(symbols), float(min_ts or 0.0)), threads=[],
                           metadata=_metadata(metadata, rank), events=len(frame))
    return build(Path(path) if path is not None else Path(f"hta-rank-{rank if rank is not None else 0}"), decoded)


def _names(symbols: Any) -> list[str]:
    table = symbols.get_sym_table() if hasattr(symbols, "get_sym_table") else symbols
    try:
        return [str(name) for name in table]
    except TypeError:
        raise TraceError(f"not an HTA symbol table: {type(symbols).__name__}") from None


def _columns(frame: pd.DataFrame, names: list[str], min_ts: float) -> dict[str, Any]:
    missing = [c for c in ("name", "cat", "pid", "tid", "ts", "dur") if c not in frame.columns]
    if missing:
        raise TraceError(f"not an HTA trace DataFrame (no {', '.join(missing)} column)")
    lookup = np.asarray([*names, ""], dtype=object)  # -1 (no symbol) → ""
    def decode(column: str) -> list[str]:
        ids = frame[column].to_numpy(dtype=np.int64)
        ids = np.where((ids >= 0) & (ids < len(names)), ids, -1)
        return lookup[ids].tolist()
    event_names = decode("name")
    cats = [vocab.LEGACY_CATEGORIES.get(c, c) for c in decode("cat")]
    count = len(frame)
    columns: dict[str, Any] = {
        "name": code_values(event_names), "cat": code_values(cats),
        "pid": id_column(frame["pid"].tolist()), "tid": id_column(frame["tid"].tolist()),
        "ts": frame["ts"].to_numpy(dtype=np.float64) + min_ts,
        "dur": frame["dur"].to_numpy(dtype=np.float64),
    }
    for column in INT_KEYS:
        columns[column] = frame[column].fillna(-1).to_numpy(dtype=np.int64) if column in frame.columns \
            else np.full(count, -1, dtype=np.int64)
    columns["sync_kind"] = code_values([n if c == vocab.CUDA_SYNC else None
                                        for n, c in zip(event_names, cats, strict=True)])
    for column in ("input_types", "concrete_inputs", "call_stack"):
        columns[column] = code_values([None] * count)
    return columns


def _metadata(metadata: dict[str, Any] | None, rank: int | None) -> dict[str, Any]:
    out = dict(metadata or {})
    if rank is not None and not isinstance(out.get("distributedInfo"), dict):
        out["distributedInfo"] = {"rank": rank}
    return out


NS_ROUNDING_ENV = "HTA_DISABLE_NS_ROUNDING"


def load_hta(path: str | Path, *, rank: int = 0, include_last_profiler_step: bool = True) -> Any:
    """HTA's ``TraceAnalysis`` of one trace file, parsed without HTA's nanosecond rounding (which turns
    fractional-µs timestamps into negative durations). ``include_last_profiler_step`` keeps every event (HTA
    drops the last step by default). Raises :class:`synchunt.errors.UsageError` when HTA is not installed or was
    already set to round."""
    import os

    from synchunt.errors import UsageError

    os.environ.setdefault(NS_ROUNDING_ENV, "1")
    try:
        from hta.configs.env_options import HTAEnvOptions
        from hta.trace_analysis import TraceAnalysis
    except ImportError:
        raise UsageError("HTA is not installed; pip install 'synchunt[hta]' (traceinsight)") from None
    if not HTAEnvOptions.instance().disable_ns_rounding():
        raise UsageError(f"HTA rounds timestamps to ns in this process; set {NS_ROUNDING_ENV}=1 before importing it")
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"no such trace: {path}")
    return TraceAnalysis(trace_files={rank: str(path.resolve())}, trace_dir=str(path.resolve().parent),
                         include_last_profiler_step=include_last_profiler_step)
