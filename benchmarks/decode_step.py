"""A generic decode-like step: ~400 small aten ops of one token through a stack of layers, and no sync.

Each layer normalises the hidden state (``layer_norm``), projects it (``matmul``), writes the new key and value
into the layer's cache at the current position (slice assignment: ``slice`` + ``copy_``), gathers the live
cache rows (``index_select``), attends over them (``matmul``, ``softmax``), and appends the result to the
running outputs (``cat``). Sizes are small, as in a serving engine's decode at batch 1, so the per-op
overhead of whatever watches the ops is what a timing of it shows.

    from decode_step import DecodeStep
    step = DecodeStep()       # the tensors, made once
    step()                    # one decode step (no host read anywhere)
    count_ops(step)           # the aten ops one step calls, as the code calls them (433 by default)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

HIDDEN = 64
CONTEXT = 32
LAYERS = 24


class DecodeStep:
    """One decode step over ``layers`` layers: about 17 aten ops a layer as the code calls them."""

    def __init__(self, layers: int = LAYERS, hidden: int = HIDDEN, context: int = CONTEXT, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.hidden, self.context = hidden, context
        self.weights = [torch.randn(hidden, 3 * hidden, generator=generator) / hidden ** 0.5 for _ in range(layers)]
        self.outputs = [torch.randn(hidden, hidden, generator=generator) / hidden ** 0.5 for _ in range(layers)]
        self.norm = (torch.ones(hidden), torch.zeros(hidden))
        self.keys = [torch.zeros(context, hidden) for _ in range(layers)]
        self.values = [torch.zeros(context, hidden) for _ in range(layers)]
        self.live = torch.arange(context)  # the cache rows this request holds (a host-built index, as in a pager)
        self.state = torch.randn(1, hidden, generator=generator)
        self.position = 0

    def __call__(self) -> torch.Tensor:
        hidden, position = self.hidden, self.position % self.context
        x, steps = self.state, []
        for weight, output, keys, values in zip(self.weights, self.outputs, self.keys, self.values, strict=True):
            h = F.layer_norm(x, (hidden,), *self.norm)
            qkv = h @ weight
            q, k, v = qkv[:, :hidden], qkv[:, hidden:2 * hidden], qkv[:, 2 * hidden:]
            keys[position:position + 1] = k
            values[position:position + 1] = v
            live_keys = keys.index_select(0, self.live)
            live_values = values.index_select(0, self.live)
            attention = torch.softmax(q @ live_keys.T * hidden ** -0.5, dim=-1)
            x = x + (attention @ live_values) @ output
            steps.append(x)
        self.position += 1
        return torch.cat(steps, dim=0)


class _Count(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        self.ops += 1
        return func(*args, **(kwargs or {}))


def count_ops(step: Callable[[], Any]) -> int:
    """The aten ops one call of ``step`` dispatches, as the code calls them (under ``inference_mode`` a dispatch
    mode sees composites whole)."""
    with torch.inference_mode(), _Count() as counter:
        step()
    return counter.ops
