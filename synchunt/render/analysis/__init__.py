"""Renderers of an analysis (terminal text, JSON, CSV, HTML): one module each, discovered by the registry."""

from synchunt.render.registry import Registry

ANALYSIS_FORMATS: Registry = Registry("analysis", __name__)

__all__ = ["ANALYSIS_FORMATS"]
