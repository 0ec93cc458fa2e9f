"""Kineto trace → pandas DataFrames (events, threads, Python frames, containment tree)."""

from synchunt.trace.load import DEFAULT_OPTIONS, LoadOptions, load_trace, load_traces, map_traces, trace_files
from synchunt.trace.model import Trace, host_lanes
from synchunt.trace.source import DEFAULT_MAX_BYTES, PartialRead

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_OPTIONS", "LoadOptions", "PartialRead", "Trace", "host_lanes", "load_trace",
           "load_traces", "map_traces", "trace_files"]
