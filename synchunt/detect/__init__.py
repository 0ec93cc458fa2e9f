"""Sync detection over a parsed trace, driven by the rule catalogue."""

from synchunt.detect.conditions import analysis_fields
from synchunt.detect.detector import detect, effective_mode
from synchunt.detect.model import DETECTED_COLUMNS, DetectedSync, Detection, Mode, SetAside

__all__ = ["DETECTED_COLUMNS", "DetectedSync", "Detection", "Mode", "SetAside", "analysis_fields", "detect",
           "effective_mode"]
