"""The sync notes of torch's docstrings (torch/_torch_docs.py, torch/linalg/__init__.py).

``torch.linalg`` states three things: functions with ``{sync_note}`` synchronize on CUDA; those with
``{sync_note_has_ex}`` synchronize and name an ``_ex`` variant that does not; the ``_ex`` variants
(``{sync_note_ex}``) synchronize only with ``check_errors=True``.
"""

from __future__ import annotations

import torch

from corpus.model import Case

_DOCS = "https://pytorch.org/docs/stable/generated/"
LINALG = torch.linalg


def _doc(name: str, expect: str | None, run, page: str, note: str) -> Case:
    return Case(f"docs.{name}", f"{_DOCS}{page}.html ({note})", expect, run)


_NONZERO = "note: causes host-device synchronization"
_WHERE = "torch.where(condition) is identical to torch.nonzero(condition, as_tuple=True)"
_NORMAL = "note: when std is a CUDA tensor, this function synchronizes"
_REPEAT = "output_size: if given, it will avoid stream synchronization"
_SYNC = "note: synchronizes that device with the CPU"
_HAS_EX = "note: synchronizes; the _ex variant does not"
_EX = "note: synchronizes only when check_errors=True"

TORCH_CASES: tuple[Case, ...] = (
    _doc("nonzero", "SH103", lambda t: torch.nonzero(t.x), "torch.nonzero", _NONZERO),
    _doc("nonzero-as-tuple", "SH103", lambda t: torch.nonzero(t.x, as_tuple=True), "torch.nonzero", _NONZERO),
    _doc("argwhere", "SH103", lambda t: torch.argwhere(t.x), "torch.argwhere", _NONZERO),
    _doc("where-condition-only", "SH103", lambda t: torch.where(t.mask), "torch.where", _WHERE),
    _doc("repeat-interleave-repeats-only", "SH106", lambda t: torch.repeat_interleave(t.counts),
         "torch.repeat_interleave", _REPEAT),
    _doc("repeat-interleave-dim-output-size", None,
         lambda t: torch.repeat_interleave(t.grid, t.counts, dim=0, output_size=4), "torch.repeat_interleave",
         _REPEAT),
    _doc("normal-tensor-mean-tensor-std", "SH112", lambda t: torch.normal(t.x, t.probs), "torch.normal", _NORMAL),
    _doc("normal-float-mean-tensor-std", "SH112", lambda t: torch.normal(0.0, t.probs), "torch.normal", _NORMAL),
    _doc("normal-tensor-mean-float-std", None, lambda t: torch.normal(t.x, 1.0), "torch.normal", _NORMAL),
    _doc("normal-float-mean-float-std", None, lambda t: torch.normal(0.0, 1.0, size=(4,), device=t.device),
         "torch.normal", _NORMAL),
    _doc("assert-async", None, lambda t: torch._assert_async(t.y > -1), "torch._assert_async",
         "for CUDA tensors, we DO NOT synchronize"),
)

LINALG_CASES: tuple[Case, ...] = (
    _doc("linalg.cholesky", "SH114", lambda t: LINALG.cholesky(t.spd), "torch.linalg.cholesky", _HAS_EX),
    _doc("linalg.cholesky-ex", None, lambda t: LINALG.cholesky_ex(t.spd), "torch.linalg.cholesky_ex", _EX),
    _doc("linalg.cholesky-ex-check-errors", "SH114", lambda t: LINALG.cholesky_ex(t.spd, check_errors=True),
         "torch.linalg.cholesky_ex", _EX),
    _doc("linalg.inv", "SH114", lambda t: LINALG.inv(t.a), "torch.linalg.inv", _HAS_EX),
    _doc("linalg.inv-ex", None, lambda t: LINALG.inv_ex(t.a), "torch.linalg.inv_ex", _EX),
    _doc("linalg.inv-ex-check-errors", "SH114", lambda t: LINALG.inv_ex(t.a, check_errors=True),
         "torch.linalg.inv_ex", _EX),
    _doc("linalg.solve", "SH114", lambda t: LINALG.solve(t.a, t.b), "torch.linalg.solve", _HAS_EX),
    _doc("linalg.solve-ex", None, lambda t: LINALG.solve_ex(t.a, t.b), "torch.linalg.solve_ex", _EX),
    _doc("linalg.solve-ex-check-errors", "SH114", lambda t: LINALG.solve_ex(t.a, t.b, check_errors=True),
         "torch.linalg.solve_ex", _EX),
    _doc("linalg.lu-factor", "SH114", lambda t: LINALG.lu_factor(t.a), "torch.linalg.lu_factor", _HAS_EX),
    _doc("linalg.lu-factor-ex", None, lambda t: LINALG.lu_factor_ex(t.a), "torch.linalg.lu_factor_ex", _EX),
    _doc("linalg.lu-factor-ex-check-errors", "SH114", lambda t: LINALG.lu_factor_ex(t.a, check_errors=True),
         "torch.linalg.lu_factor_ex", _EX),
    _doc("linalg.ldl-factor", "SH114", lambda t: LINALG.ldl_factor(t.spd), "torch.linalg.ldl_factor", _HAS_EX),
    _doc("linalg.ldl-factor-ex", None, lambda t: LINALG.ldl_factor_ex(t.spd), "torch.linalg.ldl_factor_ex", _EX),
    _doc("linalg.ldl-factor-ex-check-errors", "SH114", lambda t: LINALG.ldl_factor_ex(t.spd, check_errors=True),
         "torch.linalg.ldl_factor_ex", _EX),
    _doc("linalg.eig", "SH114", lambda t: LINALG.eig(t.a), "torch.linalg.eig", _SYNC),
    _doc("linalg.eigvals", "SH114", lambda t: LINALG.eigvals(t.a), "torch.linalg.eigvals", _SYNC),
    _doc("linalg.eigh", "SH114", lambda t: LINALG.eigh(t.spd), "torch.linalg.eigh", _SYNC),
    _doc("linalg.eigvalsh", "SH114", lambda t: LINALG.eigvalsh(t.spd), "torch.linalg.eigvalsh", _SYNC),
    _doc("linalg.svdvals", "SH114", lambda t: LINALG.svdvals(t.a), "torch.linalg.svdvals", _SYNC),
    _doc("linalg.matrix-rank", "SH114", lambda t: LINALG.matrix_rank(t.a), "torch.linalg.matrix_rank", _SYNC),
    _doc("linalg.cond", "SH114", lambda t: LINALG.cond(t.a), "torch.linalg.cond", _SYNC),
    _doc("linalg.pinv", "SH114", lambda t: LINALG.pinv(t.a), "torch.linalg.pinv", _SYNC),
    _doc("inverse", "SH114", lambda t: torch.inverse(t.a), "torch.inverse", "alias for torch.linalg.inv"),
)

CASES: tuple[Case, ...] = TORCH_CASES + LINALG_CASES
