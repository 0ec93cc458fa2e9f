"""Attribution: thread, Python call site, op chain, scope and stall of every detected sync (the analysis model)."""

from synchunt.attribute.analyze import analyze, filter_analysis
from synchunt.attribute.document import SCHEMA
from synchunt.attribute.model import (
    Analysis,
    CallSite,
    PartialRead,
    SiteSummary,
    Summary,
    Sync,
    Thread,
    TraceInfo,
)
from synchunt.attribute.sources import load_sources

__all__ = ["SCHEMA", "Analysis", "CallSite", "PartialRead", "SiteSummary", "Summary", "Sync",
           "Thread", "TraceInfo", "analyze", "filter_analysis", "load_sources"]
