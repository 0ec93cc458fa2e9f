"""Inputs that break a rewrite's condition, for the negative cases: registered beside the checker's own feeds."""

from __future__ import annotations

from typing import Any

import pytest

from synchunt.fixes.check.feeds import GENERATORS, AnyKey


def _column(case, feed, torch: Any, like, rng) -> Any:  # type: ignore[no-untyped-def]
    """A (n, 1) tensor: `t[i].item()` works, but `t.tolist()[i]` is a one-element list."""
    return torch.arange(case.size(feed) + 2, dtype=torch.float32).reshape(-1, 1)


def _vector_rows(case, feed, torch: Any, like, rng) -> Any:  # type: ignore[no-untyped-def]
    """Shape-[1] values: `.item()` reads each, `torch.stack(...).tolist()` gives lists."""
    return [torch.tensor([float(index)]) for index in range(case.size(feed) + 1)]


def _number_table(case, feed, torch: Any, like, rng) -> Any:  # type: ignore[no-untyped-def]
    return AnyKey([float(index) for index in range(case.size(feed) + 1)])


def _float_list(case, feed, torch: Any, like, rng) -> Any:  # type: ignore[no-untyped-def]
    return [0.1 * (index + 1) for index in range(case.size(feed) + 1)]


def _cumulative(case, feed, torch: Any, like, rng) -> Any:  # type: ignore[no-untyped-def]
    return lambda value, *others: value.cumsum(0)


@pytest.fixture(autouse=True, scope="session")
def _violating_feeds() -> None:
    for name, generator in {"column": _column, "vector_rows": _vector_rows, "number_table": _number_table,
                            "float_list": _float_list, "cumulative": _cumulative}.items():
        GENERATORS.setdefault(name, generator)
