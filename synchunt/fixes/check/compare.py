"""Whether two results are the same: exactly (values, dtypes, shapes), within float rounding, or as numbers
(a value kept on the device as a 0-dim tensor against the Python number it replaced)."""

from __future__ import annotations

import math
from typing import Any

_ROUNDING = {"close": 1e-5, "number": 1e-5}


def representable(value: Any) -> bool:
    """False for a Python complex (a negative number to a fractional power): a value no real tensor holds, so
    the case says nothing about a rewrite that computes on tensors."""
    if isinstance(value, complex):
        return False
    if isinstance(value, list | tuple):
        return all(representable(item) for item in value)
    return True


def equal(a: Any, b: Any, mode: str, torch: Any) -> bool:
    if mode == "number":
        return _same_numbers(_plain(a, torch), _plain(b, torch))
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if mode == "close" and a.is_floating_point():
            return bool(torch.allclose(a.cpu(), b.cpu(), rtol=_ROUNDING["close"], atol=1e-6, equal_nan=True))
        return bool(torch.equal(a.cpu(), b.cpu())) or (a.is_floating_point() and bool(
            torch.allclose(a.cpu(), b.cpu(), rtol=0.0, atol=0.0, equal_nan=True)))
    if isinstance(a, list | tuple) or isinstance(b, list | tuple):
        return (isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b)
                and all(equal(x, y, mode, torch) for x, y in zip(a, b, strict=True)))
    if isinstance(a, float) or isinstance(b, float):
        return _same_numbers(a, b) if mode == "close" else (a == b or _both_nan(a, b))
    return bool(a == b)


def _plain(value: Any, torch: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().tolist()
    if isinstance(value, list | tuple):
        return [_plain(item, torch) for item in value]
    return value


def _same_numbers(a: Any, b: Any) -> bool:
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(_same_numbers(x, y) for x, y in zip(a, b, strict=True)))
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b) if isinstance(a, bool | int) and isinstance(b, bool | int) else False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return _both_nan(a, b) or math.isclose(a, b, rel_tol=_ROUNDING["number"], abs_tol=1e-6)
    return bool(a == b)


def _both_nan(a: Any, b: Any) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
