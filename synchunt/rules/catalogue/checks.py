"""SH111–SH114 — data-dependent reads hidden in an op's own checks or in a Python-level comparison.

These ops return fixed-shape results, yet read a device value on the host: to validate their inputs
(`multinomial`, `normal` with a tensor std, linalg's error checks) or because the answer is a Python bool
(`torch.equal`, `torch.allclose`).
"""

from __future__ import annotations

from synchunt.rules.catalogue.refs import LINALG_DOC, MULTINOMIAL_DOC, SYNC_DEBUG_DOC
from synchunt.rules.model import GuardOp, OpRole, Rule, TraceOp

# linalg's `_ex` variants: the info check (and its host read) only with `check_errors=True`.
_EX_OPS = ("linalg_inv_ex", "linalg_cholesky_ex", "linalg_solve_ex", "_linalg_solve_ex", "linalg_lu_factor_ex",
           "linalg_ldl_factor_ex")

# Ops that check their infos (or read their inputs) inside the kernel, always: every host read of one call is one
# sync of that call, for the trace (anchors) and the guard alike.
_KERNEL_CHECKED = ("linalg_eig", "linalg_eigvals", "_linalg_eigvals", "_linalg_eigh", "_linalg_svd", "linalg_lstsq",
                   "cholesky")

# What the lint flags, by torch path: the functions whose factorization is checked on the host (as the guard
# sees it and docs/guard.md lists), and the `_ex` forms that check only with `check_errors=True`. Not `det`,
# `slogdet`, `qr`, `lu`, `solve_triangular`: they return without reading their infos.
_CHECKED_FUNCTIONS = ("linalg.inv", "linalg.cholesky", "linalg.solve", "linalg.lu_factor", "linalg.ldl_factor",
                      "linalg.eig", "linalg.eigvals", "linalg.eigh", "linalg.eigvalsh", "linalg.svd",
                      "linalg.svdvals", "linalg.matrix_rank", "linalg.cond", "linalg.pinv", "linalg.lstsq",
                      "inverse", "cholesky")
_CHECKED_IF_ASKED = ("linalg.inv_ex", "linalg.cholesky_ex", "linalg.solve_ex", "linalg.lu_factor_ex",
                     "linalg.ldl_factor_ex")

CHECK_RULES: tuple[Rule, ...] = (
    Rule(
        code="SH111",
        name="multinomial-validity-check",
        title="`torch.multinomial` without replacement or with one sample (torch < 2.5)",
        what_it_does="Flags, in traces of torch before 2.5, `torch.multinomial(p, n)` without replacement or with "
        "`n == 1`: ATen validated the probabilities on the host first. Since torch 2.5 (pytorch#134818) the checks "
        "are device-side asserts (`_assert_async`), so the runtime guard does not flag it on current torch.",
        why_bad="The fast path checks that no probability is negative, infinite or NaN and that rows do not sum "
        "to zero, reading each check's result back to the host before sampling: a full stall per sampling step.",
        example="next_ids = torch.multinomial(probs, num_samples=1)",
        use_instead="next_ids = (probs / torch.empty_like(probs).exponential_()).argmax(dim=-1, keepdim=True)",
        mechanism="Before torch 2.5, `multinomial` computed `((p.max() < inf) & (p.min() >= 0)).item()` and "
        "`(p.sum(-1) == 0).sum().item()` when `replacement=False` or `num_samples == 1`.",
        fingerprint="`aten::multinomial` › `aten::item` › `aten::_local_scalar_dense` › D2H + stream sync",
        fix="sample with the Gumbel-max trick (`(p / exponential_noise).argmax(-1)`), which needs no host check",
        references=(MULTINOMIAL_DOC, "pytorch/pytorch#11931", "pytorch/pytorch#134818"),
        trace_ops=(TraceOp("aten::multinomial", role=OpRole.ANCHOR),),
        lint_forms=("multinomial-checked",),
    ),
    Rule(
        code="SH112",
        name="normal-tensor-std-check",
        title="`torch.normal` with a tensor `std`",
        what_it_does="Flags `torch.normal(mean, std)` where `std` is a tensor: ATen checks `std >= 0` on the host.",
        why_bad="The check reads `std.min() >= 0` back to the host before sampling, so every call waits for the "
        "kernels that produced `std`.",
        example="noise = torch.normal(mu, sigma)",
        use_instead="noise = mu + sigma * torch.randn_like(mu)  # sigma known to be non-negative",
        mechanism="`normal(Tensor mean, Tensor std)` runs `TORCH_CHECK(std.min().ge(0).item<bool>())`.",
        fingerprint="`aten::normal` › `aten::item` › `aten::_local_scalar_dense` › D2H + stream sync",
        fix="`mean + std * torch.randn_like(mean)`, which has no host-side check",
        references=("https://pytorch.org/docs/stable/generated/torch.normal.html",),
        trace_ops=(TraceOp("aten::normal", role=OpRole.ANCHOR),),
        guard_ops=(GuardOp("normal", when="tensor-std"),),
        lint_forms=("normal-tensor-std",),
    ),
    Rule(
        code="SH113",
        name="tensor-value-comparison",
        title="`torch.equal` / `torch.allclose`: a Python bool from device data",
        what_it_does="Flags `torch.equal(a, b)`, `torch.allclose(a, b)` and `a.equal(b)` / `a.allclose(b)` on "
        "device tensors.",
        why_bad="The answer is a Python `bool`, so the comparison's result must reach the host: the call waits for "
        "both operands and everything queued before them.",
        example="if not torch.allclose(out, ref):\n    fallback()",
        use_instead="ok = torch.isclose(out, ref).all()  # a device bool; torch._assert_async(ok) for a check",
        mechanism="`equal` and `allclose` reduce on the device and read the reduction with `.item()`.",
        fingerprint="`aten::allclose` › `aten::item` › `aten::_local_scalar_dense`, or `aten::equal` › D2H + sync",
        fix="keep the comparison on the device (`torch.isclose(a, b).all()`, `torch.eq(a, b).all()`) and assert "
        "it with `torch._assert_async`",
        references=(SYNC_DEBUG_DOC,),
        trace_ops=(TraceOp("aten::equal"), TraceOp("aten::allclose", role=OpRole.ANCHOR)),
        guard_ops=(GuardOp("equal"), GuardOp("allclose")),
        lint_forms=("call:equal", "method:equal", "call:allclose", "method:allclose"),
    ),
    Rule(
        code="SH114",
        name="linalg-error-check",
        title="Linear algebra that checks its result on the host (`linalg.inv`, `cholesky`, `solve`, …)",
        what_it_does="Flags `torch.linalg` calls that raise on singular or non-positive-definite input "
        "(`inv`, `cholesky`, `solve`, `lu_factor`, `eigh`, `inv_ex(check_errors=True)` …).",
        why_bad="To raise a Python error the op reads its `info` tensor back to the host after the factorization, "
        "so the host waits for the whole decomposition.",
        example="w = torch.linalg.inv(h)",
        use_instead="w, info = torch.linalg.inv_ex(h)  # check info on the device or after a sync point",
        mechanism="`at::_linalg_check_errors(info, …)` evaluates `info.any().item()` (and, on failure, more "
        "reads) on the host.",
        fingerprint="`aten::_linalg_check_errors` › `aten::item` › `aten::_local_scalar_dense` › D2H + sync",
        fix="the `_ex` variants (`linalg.inv_ex`, `cholesky_ex`, `solve_ex`, `lu_factor_ex`), which return `info` "
        "without checking it",
        references=(LINALG_DOC,),
        # the ops that check inside their kernel: every host read of one call is that call's one sync
        trace_ops=(TraceOp("aten::_linalg_check_errors", role=OpRole.ANCHOR),
                   *(TraceOp(f"aten::{packet}", role=OpRole.ANCHOR) for packet in _KERNEL_CHECKED)),
        guard_ops=(GuardOp("_linalg_check_errors"),
                   # ops that check their infos inside the kernel, always or when asked to
                   *(GuardOp(packet) for packet in _KERNEL_CHECKED),
                   *(GuardOp(packet, when="check-errors") for packet in _EX_OPS)),
        lint_forms=(*(f"linalg-checked:{name}" for name in _CHECKED_FUNCTIONS),
                    *(f"linalg-checked-if-asked:{name}" for name in _CHECKED_IF_ASKED)),
    ),
)
