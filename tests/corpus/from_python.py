"""Torch's own Python: gradient clipping, distributions, and the explicit waits of ``torch.cuda``."""

from __future__ import annotations

import torch
from torch.distributions import Categorical, Normal

from corpus.inputs import Inputs
from corpus.model import Case, Observable

_CLIP = "pytorch torch/nn/utils/clip_grad.py "
_DIST = "pytorch torch/distributions/distribution.py "
_NORMAL = "pytorch torch/distributions/normal.py "
_CUDA = "https://pytorch.org/docs/stable/generated/"


def _case(name: str, source: str, expect: str | None, run, **extra: object) -> Case:
    return Case(f"python.{name}", source, expect, run, **extra)


def _parameters(t: Inputs) -> list[torch.nn.Parameter]:
    weights = [torch.nn.Parameter(t.grid.clone()), torch.nn.Parameter(t.row.clone())]
    for weight in weights:
        weight.grad = torch.ones_like(weight)
    return weights


def _optimizer_step(t: Inputs, make: type[torch.optim.Optimizer]) -> None:
    weights = _parameters(t)
    optimizer = make(weights, lr=0.1)
    optimizer.step()
    optimizer.step()


def _normal(t: Inputs, *, validate: bool) -> Normal:
    return Normal(t.x, t.probs, validate_args=validate)


def _explicit_waits() -> tuple[Case, ...]:
    def event(t: Inputs) -> torch.cuda.Event:
        done = torch.cuda.Event()
        done.record()
        return done

    return (
        _case("cuda-synchronize", _CUDA + "torch.cuda.synchronize.html", "SH301",
              lambda t: torch.cuda.synchronize(), observable=Observable.CUDA),
        _case("event-synchronize", _CUDA + "torch.cuda.Event.html (synchronize: waits for the event)", "SH302",
              lambda t: event(t).synchronize(), observable=Observable.CUDA),
        _case("stream-synchronize", _CUDA + "torch.cuda.Stream.html (synchronize: waits for the stream)", "SH303",
              lambda t: torch.cuda.current_stream().synchronize(), observable=Observable.CUDA),
        _case("event-query", _CUDA + "torch.cuda.Event.html (query: does not wait)", None,
              lambda t: event(t).query(), observable=Observable.CUDA),
        _case("stream-wait-event", _CUDA + "torch.cuda.Stream.html (wait_event: a device-side wait)", None,
              lambda t: torch.cuda.current_stream().wait_event(event(t)), observable=Observable.CUDA),
    )


CASES: tuple[Case, ...] = (
    _case("clip-grad-norm", _CLIP + "clip_grad_norm_: clamps instead of `if clip_coef < 1` (no host read)", None,
          lambda t: torch.nn.utils.clip_grad_norm_(_parameters(t), 1.0)),
    _case("clip-grad-norm-error-if-nonfinite", _CLIP + "_get_total_norm: `if error_if_nonfinite and "
          "torch.logical_or(...)`", "SH110",
          lambda t: torch.nn.utils.clip_grad_norm_(_parameters(t), 1.0, error_if_nonfinite=True)),
    _case("clip-grad-value", _CLIP + "clip_grad_value_: foreach clamps, no value-dependent branch", None,
          lambda t: torch.nn.utils.clip_grad_value_(_parameters(t), 0.5)),
    _case("distribution-validate-args", _DIST + "Distribution.__init__: `if not torch._is_all_true(valid)`",
          "SH110", lambda t: _normal(t, validate=True)),
    _case("distribution-no-validation", _DIST + "Distribution.__init__: validate_args=False skips the checks",
          None, lambda t: _normal(t, validate=False)),
    _case("distribution-log-prob-validated", _DIST + "_validate_sample: `if not torch._is_all_true(valid)`",
          "SH110", lambda t: _normal(t, validate=True).log_prob(t.x)),
    _case("normal-sample", _NORMAL + "Normal.sample: torch.normal(loc, scale) with a tensor std", "SH112",
          lambda t: _normal(t, validate=False).sample()),
    _case("normal-rsample", _NORMAL + "Normal.rsample: loc + eps * scale", None,
          lambda t: _normal(t, validate=False).rsample()),
    _case("categorical-sample", "pytorch torch/distributions/categorical.py Categorical.sample: multinomial "
          "with replacement (checked with _assert_async)", None,
          lambda t: Categorical(probs=t.probs, validate_args=False).sample()),
    _case("adam-step", "pytorch torch/optim/adam.py _init_group (note: [special device hosting for step]: "
          "`step` stays on the CPU unless capturable or fused)", None,
          lambda t: _optimizer_step(t, torch.optim.Adam)),
    _case("adamw-step", "pytorch torch/optim/adam.py _init_group (AdamW is Adam with decoupled decay)", None,
          lambda t: _optimizer_step(t, torch.optim.AdamW)),
    _case("sgd-step", "pytorch torch/optim/sgd.py _single_tensor_sgd / _multi_tensor_sgd: no host read", None,
          lambda t: _optimizer_step(t, torch.optim.SGD)),
    *_explicit_waits(),
)
