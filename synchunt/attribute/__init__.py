"""Attribution: thread, Python call site, op chain, scope and stall of every detected sync."""

from synchunt.attribute.analysis import SCHEMA, Analysis, TraceInfo, analyze, load_sources, site_labels
from synchunt.attribute.callsite import DEFAULT_SKIP_PACKAGES, Frame, FrameFilter

__all__ = ["DEFAULT_SKIP_PACKAGES", "SCHEMA", "Analysis", "Frame", "FrameFilter", "TraceInfo", "analyze",
           "load_sources", "site_labels"]
