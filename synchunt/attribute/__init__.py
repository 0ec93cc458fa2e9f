"""Attribution: thread, Python call site, op chain, scope and stall of every detected sync."""

from synchunt.attribute.analysis import SCHEMA, Analysis, TraceInfo, analyze, load_sources, site_labels
from synchunt.sites import Frame, FrameFilter

__all__ = ["SCHEMA", "Analysis", "Frame", "FrameFilter", "TraceInfo", "analyze",
           "load_sources", "site_labels"]
