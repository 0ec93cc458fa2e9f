"""An annotated copy of a trace for Perfetto / chrome://tracing: the original events plus a synchunt track."""

from synchunt.annotate.marks import annotate_trace, build_marks
from synchunt.annotate.model import SyncMark, WaitTarget
from synchunt.annotate.track import CATEGORY, COUNTER_NAME, TRACK_TID, track_events
from synchunt.annotate.write import write_annotated

__all__ = ["CATEGORY", "COUNTER_NAME", "TRACK_TID", "SyncMark", "WaitTarget", "annotate_trace", "build_marks",
           "track_events", "write_annotated"]
