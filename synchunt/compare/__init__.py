"""Before/after comparison of two analyses (a model of its own; rendered by ``synchunt.render.comparison``)."""

from synchunt.compare.build import compare, trace_labels
from synchunt.compare.model import Comparison, CountDelta, Noise, Side, SiteDelta

__all__ = ["Comparison", "CountDelta", "Noise", "Side", "SiteDelta", "compare", "trace_labels"]
