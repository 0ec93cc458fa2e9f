"""Sync detection over a parsed trace, driven by the rule catalogue."""

from synchunt.detect.detector import detect, effective_mode
from synchunt.detect.model import SYNC_COLUMNS, DetectedSync, Detection, Mode, SetAside

__all__ = ["SYNC_COLUMNS", "DetectedSync", "Detection", "Mode", "SetAside", "detect", "effective_mode"]
