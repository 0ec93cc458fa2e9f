"""Renderers of the stall report (an analysis with the timelines of its traces, or a before/after pair): the
HTML page. ``synchunt report``, ``synchunt analyze --format html`` and ``synchunt profile`` all render it here."""

from synchunt.render.registry import Registry

REPORT_FORMATS: Registry = Registry("report", __name__, default="html")

__all__ = ["REPORT_FORMATS"]
