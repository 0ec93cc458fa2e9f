"""Helpers shared by the audit paths: variant checks, devices, seeded inputs.

Inputs are drawn on the CPU with a seeded generator and moved to the device in ``setup`` (never profiled),
so the same seed gives the same inputs on every device.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

VARIANTS = ("bad", "fixed")


def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")


_POSITIVE_SUFFIXES = ("_size", "_dim", "_slots", "_capacity")


def check_params(params: Any) -> None:
    """The variant, and sizes that make sense: no negative int; sizes, dimensions, capacities and counts of
    things that must exist (``*_size``, ``*_dim``, ``num_*``, ``*_slots``, ``*_capacity``, ``groups``) positive;
    each ``X_rank`` below its ``X_size``. A bad value is a ``ValueError`` naming the option."""
    check_variant(params.variant)
    values = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    for name, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        positive = name.endswith(_POSITIVE_SUFFIXES) or name.startswith("num_") or name == "groups"
        if value < (1 if positive else 0):
            raise ValueError(f"{name} must be {'positive' if positive else 'non-negative'}, got {value}")
        size = values.get(name.removesuffix("_rank") + "_size") if name.endswith("_rank") else None
        if isinstance(size, int) and not value < size:
            raise ValueError(f"{name} {value} must be below {name.removesuffix('_rank')}_size {size}")


def resolve_device(name: str) -> torch.device:
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but CUDA is not available")
    return device


def seeded(seed: int) -> torch.Generator:
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator


def random_pages(count: int, first: int, end: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` distinct page ids from ``[first, end)`` in random order (a fragmented free list)."""
    if count > end - first:
        raise ValueError(f"cannot draw {count} distinct pages from [{first}, {end})")
    return torch.randperm(end - first, generator=generator)[:count] + first


def paged_slots(num_tokens: int, pages: torch.Tensor, page_size: int) -> torch.Tensor:
    """Slots of tokens ``0..num_tokens-1`` laid out in ``pages``: token ``p`` lives at
    ``pages[p // page_size] * page_size + p % page_size`` (how every paged allocator hands out a kv row)."""
    positions = torch.arange(num_tokens)
    return pages[positions // page_size] * page_size + positions % page_size
