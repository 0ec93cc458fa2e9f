"""``test_sync_warning`` in pytorch's test/test_torch.py: its expect_no_sync and expect_sync calls, in order.

PyTorch runs each under ``torch.cuda.set_sync_debug_mode`` and asserts the warning (or its absence). There
``x``, ``y``, ``ind``, ``repeats`` and ``mask`` are on the device and ``ind_cpu`` is a host copy of ``ind``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from corpus.model import Case, Observable

SOURCE = "pytorch test/test_torch.py TestTorchDeviceType.test_sync_warning"


def _put(x: torch.Tensor, index: torch.Tensor, value: object) -> torch.Tensor:
    x[index] = value
    return x


def _cond(y: torch.Tensor) -> torch.Tensor:
    if y:  # taking the boolean value of a tensor synchronizes
        return y
    return 2 * y


def _no_sync(name: str, run, position: int) -> Case:
    return Case(f"test_sync_warning.no_sync.{name}", f"{SOURCE} expect_no_sync[{position}]", None, run)


def _sync(name: str, run, position: int, code: str, **convention: object) -> Case:
    return Case(f"test_sync_warning.sync.{name}", f"{SOURCE} expect_sync[{position}]", code, run, **convention)


CASES: tuple[Case, ...] = (
    _no_sync("put-mask-python-scalar", lambda t: _put(t.x, t.mask, 1.0), 0),
    _no_sync("put-index-device-scalar", lambda t: _put(t.x, t.ind, t.y), 1),
    _no_sync("get-index", lambda t: t.x[t.ind], 2),
    # The CPU kernel checks the index range with two host reads; the CUDA kernel does not.
    _no_sync("one-hot-num-classes", lambda t: F.one_hot(t.ind, num_classes=4), 3),
    _no_sync("randperm", lambda t: torch.randperm(20000, device=t.device), 4),
    _no_sync("repeat-interleave-int-output-size", lambda t: torch.repeat_interleave(t.x, 2, output_size=8), 5),
    _no_sync("repeat-interleave-tensor-output-size",
             lambda t: torch.repeat_interleave(t.x, t.repeats, output_size=8), 6),
    _no_sync("any-0-dim", lambda t: torch.any(t.y), 7),
    # A one-element value on the device is not ATen's masked-fill fast path; a host one is.
    _sync("put-mask-device-scalar", lambda t: _put(t.x, t.mask, t.y), 0, "SH102",
          observable=Observable.CONVENTION, on_cpu=None),
    # A host index into a device tensor is copied to the device first, blocking.
    _sync("put-host-index", lambda t: _put(t.x, t.ind_host, t.y), 1, "SH202",
          observable=Observable.CONVENTION, on_cpu=None),
    _sync("get-mask", lambda t: t.x[t.mask], 2, "SH101"),
    _sync("get-host-index", lambda t: t.x[t.ind_host], 3, "SH202", observable=Observable.CONVENTION, on_cpu=None),
    _sync("nonzero", lambda t: t.x.nonzero(), 4, "SH103"),
    _sync("tensor-truthiness", lambda t: _cond(t.y), 5, "SH110"),
    # Without num_classes the output width is max(input) + 1: an internal scalar read.
    _sync("one-hot-no-num-classes", lambda t: F.one_hot(t.ind), 6, "SH109"),
    _sync("repeat-interleave-tensor", lambda t: torch.repeat_interleave(t.x, t.repeats), 7, "SH106"),
)
