"""Renderers of a comparison (terminal text, JSON, HTML)."""

from synchunt.render.registry import Registry

COMPARISON_FORMATS: Registry = Registry("comparison", __name__)

__all__ = ["COMPARISON_FORMATS"]
