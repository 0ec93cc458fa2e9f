"""The shadow device's tests: the annotated patterns of ``fixtures/`` as a fixture."""

from __future__ import annotations

from typing import Any

import pytest
import shadow_helpers  # noqa: F401  (puts fixtures/ on the import path)


@pytest.fixture
def patterns() -> Any:
    import shadow_patterns as module

    return module
