"""SH1xx — data-dependent reads: ops whose result (or whose checks) need a device value on the host."""

from __future__ import annotations

from synchunt.rules.catalogue.refs import (
    NONZERO_DOC,
    SIZED_FACTORIES,
    SYNC_DEBUG_DOC,
    TENSOR_BUILDERS,
    TYPED_CONSTRUCTORS,
)
from synchunt.rules.model import GuardOp, GuardPatch, OpRole, PatchEffect, Rule, TraceOp

READ_RULES: tuple[Rule, ...] = (
    Rule(
        code="SH101",
        name="boolean-mask-index",
        title="Boolean-mask indexing `x[mask]`",
        what_it_does="Flags reads through a boolean mask, `x[mask]`, with a bool/uint8 mask on the device.",
        why_bad="The result's length depends on the mask's contents, so PyTorch must copy the count of true "
        "elements to the host and wait for every kernel queued before it. Inside a per-layer loop on a side "
        "stream this serializes the loop behind the previous layer's transfer and stalls the launching thread.",
        example="local = indices[indices % dcp_size == dcp_rank] // dcp_size",
        use_instead="local = indices[dcp_rank::dcp_size] // dcp_size  # valid when runs are whole pages",
        mechanism="`aten::index` turns the mask into indices with `aten::nonzero`, whose output size is the "
        "number of true elements: the host reads that count back (`cudaMemcpyAsync` D2H + "
        "`cudaStreamSynchronize`).",
        fingerprint="`aten::index` › `aten::nonzero` › `cudaMemcpyAsync` (DtoH) + `cudaStreamSynchronize`",
        fix="a strided slice when the selected positions are regular (`x[r::n]`), "
        "`torch.where(mask, x, fill)` to stay dense, or a CPU-side mask",
        fix_patterns=("modulo-mask-slice", "range-mask-slice", "masked-reduction", "mask-assign-where"),
        references=(NONZERO_DOC, "sglang PR #34889"),
        trace_ops=(TraceOp("aten::nonzero", under="aten::index"),),
        guard_ops=(GuardOp("index", when="bool-index"),),
        lint_forms=("mask-subscript",),
    ),
    Rule(
        code="SH102",
        name="boolean-mask-assign",
        title="Boolean-mask assignment `x[mask] = values`",
        what_it_does="Flags assignments through a boolean mask, `x[mask] = t`, whose value is a tensor with more "
        "than one element or a tensor on the device.",
        why_bad="Writing through a mask needs the positions of the true elements; computing them sizes an "
        "output from device data, which the host must wait for.",
        example="x[mask] = y[mask]",
        use_instead="x = torch.where(mask, y, x)",
        mechanism="`aten::index_put_` converts the mask with `aten::nonzero` unless the masked-fill fast path "
        "applies (a one-element CPU value), so the host reads the count of true elements.",
        fingerprint="`aten::index_put_` › `aten::_index_put_impl_` › `aten::nonzero` › D2H copy + stream sync",
        fix="`x.masked_fill_(mask, v)` for a scalar, `torch.where(mask, values, x)` for a tensor",
        fix_patterns=("mask-assign-where",),
        references=(NONZERO_DOC,),
        trace_ops=(
            TraceOp("aten::nonzero", under="aten::_index_put_impl_"),
            TraceOp("aten::nonzero", under="aten::index_put_"),
        ),
        guard_ops=(GuardOp("index_put_", when="bool-index-tensor-value"),
                   GuardOp("index_put", when="bool-index-tensor-value")),
        lint_forms=("mask-assign",),
    ),
    Rule(
        code="SH103",
        name="nonzero",
        title="`torch.nonzero`, `argwhere`, one-argument `torch.where`",
        what_it_does="Flags `torch.nonzero(x)`, `x.nonzero()`, `torch.argwhere(x)` and `torch.where(cond)`, whose "
        "output size is the number of non-zero elements.",
        why_bad="Every call is a full device-to-host round trip: the host blocks until all queued work on the "
        "stream has finished, then reads one integer.",
        example="idx = torch.nonzero(free_mask).squeeze(1)",
        use_instead="idx = torch.nonzero_static(free_mask, size=max_free, fill_value=-1).squeeze(1)",
        mechanism="The output shape is the number of non-zero elements, counted on the device and copied "
        "back before the output can be allocated.",
        fingerprint="`aten::nonzero` (or `aten::argwhere`) › D2H copy + `cudaStreamSynchronize`",
        fix="`torch.nonzero_static(x, size=k, fill_value=-1)` when an upper bound is known; stay dense "
        "with three-argument `torch.where`",
        fix_patterns=("count-nonzero",),
        references=(NONZERO_DOC, SYNC_DEBUG_DOC),
        trace_ops=(TraceOp("aten::nonzero"), TraceOp("aten::argwhere")),
        guard_ops=(GuardOp("nonzero"), GuardOp("argwhere"), GuardOp("nonzero_numpy"),
                   GuardOp("where", when="condition-only")),
        lint_forms=("call:nonzero", "method:nonzero", "call:argwhere", "method:argwhere", "where-one-arg"),
    ),
    Rule(
        code="SH104",
        name="masked-select",
        title="`torch.masked_select`",
        what_it_does="Flags `torch.masked_select(x, mask)` and `x.masked_select(mask)`, whose output size depends "
        "on the mask's contents.",
        why_bad="Like boolean indexing, the host must learn how many elements are selected before it can "
        "allocate the result, which waits for the device.",
        example="vals = torch.masked_select(scores, keep)",
        use_instead="vals = torch.where(keep, scores, torch.zeros_like(scores))",
        mechanism="The output length is the number of true mask elements, read back by the host.",
        fingerprint="`aten::masked_select` › (`aten::nonzero` | `aten::_local_scalar_dense`) › D2H + sync",
        fix="`torch.where(mask, x, fill)`; `nonzero_static` + `index_select` for a bounded gather",
        references=(SYNC_DEBUG_DOC,),
        trace_ops=(TraceOp("aten::nonzero", under="aten::masked_select"), TraceOp("aten::masked_select")),
        guard_ops=(GuardOp("masked_select"),),
        lint_forms=("call:masked_select", "method:masked_select"),
    ),
    Rule(
        code="SH105",
        name="unique",
        title="`torch.unique` and `unique_consecutive`",
        what_it_does="Flags `torch.unique(x)`, `x.unique()` and `torch.unique_consecutive(x)`: deduplication whose "
        "output size depends on the data.",
        why_bad="`unique` always synchronizes: the host waits for the sort and count to finish on the device.",
        example="pages = torch.unique(indices // page_size)",
        use_instead="pages = indices[::page_size] // page_size  # when indices are whole, aligned pages",
        mechanism="The number of distinct values is computed on the device and copied to the host to size "
        "the output (an internal `.item()`/`.cpu()`).",
        fingerprint="`aten::_unique2` | `aten::unique_dim` | `aten::unique_consecutive` › D2H + sync",
        fix="a presence vector (`zeros(n).scatter_(0, x, 1)`), sort + fixed-shape diff mask, or "
        "compute on a CPU copy the host already has",
        references=(SYNC_DEBUG_DOC,),
        trace_ops=(TraceOp("aten::_unique2"), TraceOp("aten::_unique"), TraceOp("aten::unique_dim"),
                   TraceOp("aten::unique_consecutive"), TraceOp("aten::unique_dim_consecutive")),
        guard_ops=(GuardOp("_unique2"), GuardOp("_unique"), GuardOp("unique_dim"),
                   GuardOp("unique_consecutive"), GuardOp("unique_dim_consecutive")),
        lint_forms=("call:unique", "method:unique", "call:unique_consecutive", "method:unique_consecutive"),
    ),
    Rule(
        code="SH106",
        name="repeat-interleave-without-output-size",
        title="`repeat_interleave` with tensor repeats and no `output_size`",
        what_it_does="Flags `torch.repeat_interleave(x, repeats)` with tensor repeats and no `output_size=`.",
        why_bad="Without `output_size` PyTorch sums the repeats on the device and waits for the result.",
        example="seg = torch.repeat_interleave(ids, lens)",
        use_instead="seg = torch.repeat_interleave(ids, lens, output_size=total_tokens)",
        mechanism="The output length is `repeats.sum()`, read back with an internal `.item()`.",
        fingerprint="`aten::repeat_interleave` › `aten::_local_scalar_dense` › D2H + sync",
        fix="pass `output_size=` when the host knows the total, or keep `repeats` on the CPU",
        fix_patterns=("repeat-interleave-output-size",),
        references=("https://pytorch.org/docs/stable/generated/torch.repeat_interleave.html",),
        trace_ops=(TraceOp("aten::repeat_interleave", role=OpRole.ANCHOR),),
        guard_ops=(GuardOp("repeat_interleave", when="no-output-size"),),
        lint_forms=("repeat-interleave-no-output-size",),
    ),
    Rule(
        code="SH107",
        name="bincount",
        title="`torch.bincount`",
        what_it_does="Flags `torch.bincount(x)`, even with `minlength`: its output size depends on the data.",
        why_bad="The host reads the input's min and max from the device before it can size the output.",
        example="counts = torch.bincount(expert_ids)",
        use_instead="counts = torch.zeros(n_experts, dtype=torch.long, device=d).index_add_(0, expert_ids, "
        "torch.ones_like(expert_ids))",
        mechanism="The output length is `max(x) + 1`; the min and max are copied to the host first.",
        fingerprint="`aten::bincount` › D2H + sync",
        fix="`torch.zeros(k).index_add_(0, x, torch.ones_like(x))` with a host-known `k`",
        trace_ops=(TraceOp("aten::bincount"),),
        guard_ops=(GuardOp("bincount"),),
        lint_forms=("call:bincount", "method:bincount"),
    ),
    Rule(
        code="SH108",
        name="histc-default-range",
        title="`torch.histc` with `min == max`",
        what_it_does="Flags `torch.histc(x, bins)` calls that leave the range to the data (`min == max`, the "
        "default `min=0, max=0`).",
        why_bad="Computing the range from the data means a device-to-host read before the histogram runs.",
        example="h = torch.histc(x, bins=32)",
        use_instead="h = torch.histc(x, bins=32, min=0.0, max=1.0)",
        mechanism="With an empty range the data's min and max are read back to the host.",
        fingerprint="`aten::histc` › D2H + sync",
        fix="pass an explicit range with `min < max`",
        trace_ops=(TraceOp("aten::histc", when="histc-min-eq-max"),),
        guard_ops=(GuardOp("histc", when="histc-min-eq-max"),),
        lint_forms=("histc-default-range",),
    ),
    Rule(
        code="SH109",
        name="scalar-read",
        title="Reading a device scalar: `.item()`, `int(t)`, `float(t)`",
        what_it_does="Flags reads of a tensor's value into a Python number: `t.item()`, `int(t)`, `float(t)`, "
        "builtin `max`/`min`/`sum` over tensors, tensor slice bounds.",
        why_bad="The host cannot know the value until the device has produced it, so it waits for every "
        "kernel queued before it; in a scheduler or forward loop that stall is on the critical path.",
        example="n = (lens > 0).sum().item()",
        use_instead="n_dev = (lens > 0).sum()  # keep on device; read once per step after an event",
        mechanism="`aten::_local_scalar_dense` copies one element to the host and waits for it "
        "(`cudaMemcpyAsync` D2H + `cudaStreamSynchronize`).",
        fingerprint="`aten::item` › `aten::_local_scalar_dense` › D2H copy + `cudaStreamSynchronize`",
        fix="keep the value on the device (`torch.where`, `torch.maximum`), batch reads into one "
        "pinned `non_blocking` copy read after an event, or `torch._assert_async` for checks",
        fix_patterns=("read-once-before-loop", "batch-reads-after-loop", "hoist-loop-invariant",
                      "stack-device-scalars", "device-min-max", "keep-on-device"),
        references=(SYNC_DEBUG_DOC,),
        # `one_hot(t)` sizes its output from `t.max().item()`; with `num_classes` only its CPU kernel reads `t`
        # (range checks the CUDA kernel leaves to device asserts): the reads under it are one sync, or none
        trace_ops=(TraceOp("aten::_local_scalar_dense", role=OpRole.READ),
                   TraceOp("aten::one_hot", when="no-num-classes")),
        guard_ops=(GuardOp("item", when="not-truthiness"), GuardOp("_local_scalar_dense", when="not-truthiness"),
                   GuardOp("one_hot", when="no-num-classes")),
        lint_forms=("method:item", "builtin-scalar:int", "builtin-scalar:float", "builtin-scalar:complex",
                    "builtin-minmax:max", "builtin-minmax:min",
                    *(f"tensor-of-tensors:{name}" for name in (*TENSOR_BUILDERS, *TYPED_CONSTRUCTORS)),
                    *(f"size-from-tensor:{name}" for name in SIZED_FACTORIES), "size-from-tensor:range",
                    "sequence-repeat", "tensor-contains", "scalar-index"),
    ),
    Rule(
        code="SH110",
        name="tensor-truthiness",
        title="Tensor truthiness: `if t:`, `bool(t)`, `assert t`",
        what_it_does="Flags Python control flow on a device tensor's value: `if t:`, `while t:`, `bool(t)`, "
        "`assert t`, `t and u`.",
        why_bad="A branch on a device value needs that value on the host now, so the host waits for it.",
        example="if (seq_lens > max_len).any():\n    raise ValueError",
        use_instead="torch._assert_async((seq_lens <= max_len).all())",
        mechanism="`aten::is_nonzero` reads the value through `aten::_local_scalar_dense` (D2H + sync).",
        fingerprint="`aten::is_nonzero` › `aten::item` › `aten::_local_scalar_dense` › D2H + sync",
        fix="`torch._assert_async(cond)` for checks; `torch.where` to branch on the device",
        fix_patterns=("assert-async", "branch-to-where", "keep-on-device"),
        references=(SYNC_DEBUG_DOC,),
        trace_ops=(TraceOp("aten::is_nonzero", role=OpRole.ANCHOR),),
        guard_ops=(GuardOp("is_nonzero"), GuardOp("_local_scalar_dense", when="truthiness")),
        guard_patches=(GuardPatch("torch.Tensor.__bool__", effect=PatchEffect.MARK),
                       GuardPatch("torch.Tensor.is_nonzero", effect=PatchEffect.MARK),
                       GuardPatch("torch.is_nonzero", effect=PatchEffect.MARK)),
        lint_forms=("truthiness",),
    ),
)
