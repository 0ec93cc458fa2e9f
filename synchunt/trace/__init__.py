"""Kineto trace → pandas DataFrames (events, threads, Python frames, containment tree)."""

from synchunt.trace.load import load_trace, load_traces, trace_files
from synchunt.trace.model import Trace

__all__ = ["Trace", "load_trace", "load_traces", "trace_files"]
