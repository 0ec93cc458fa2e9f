"""Renderers of an audit result: the matrix as text, JSON and an HTML page."""

from synchunt.render.registry import Registry

AUDIT_FORMATS: Registry = Registry("audit", __name__)

__all__ = ["AUDIT_FORMATS"]
