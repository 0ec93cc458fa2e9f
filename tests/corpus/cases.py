"""Every corpus case, from every source."""

from __future__ import annotations

from corpus import from_docs, from_kernels, from_python, from_tests
from corpus.model import Case

CASES: tuple[Case, ...] = from_tests.CASES + from_docs.CASES + from_kernels.CASES + from_python.CASES
