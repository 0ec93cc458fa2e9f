"""Renderers of a gate result: terminal text, GitHub annotations, SARIF, JUnit XML, JSON."""

from synchunt.render.registry import Registry

GATE_FORMATS: Registry = Registry("gate", __name__)

__all__ = ["GATE_FORMATS"]
