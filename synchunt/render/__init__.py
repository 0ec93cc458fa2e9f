"""Renderers: one registry per model (analysis, comparison, findings, gate result, audit, rules), one module
per format. Renderers take models and compute nothing the model does not hold."""
