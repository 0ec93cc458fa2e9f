"""SH2xx — blocking copies: the host waits for a transfer (and for the stream work queued before it)."""

from __future__ import annotations

from synchunt.rules.catalogue.refs import PINNED_DOC, SYNC_DEBUG_DOC, TENSOR_BUILDERS, TYPED_CONSTRUCTORS
from synchunt.rules.model import (
    Blocking,
    GuardOp,
    GuardPatch,
    OpRole,
    Rule,
    RuntimeCall,
    TraceOp,
)

# The copy ops of `t.to(...)`/`t.cpu()`/`t.cuda()`: `aten::to` › `aten::_to_copy` › `aten::copy_`.
_TO_COPY_OPS = (TraceOp("aten::copy_", role=OpRole.COPY, under="aten::_to_copy"),
                TraceOp("aten::_to_copy", role=OpRole.COPY), TraceOp("aten::to", role=OpRole.COPY))

COPY_RULES: tuple[Rule, ...] = (
    Rule(
        code="SH201",
        name="device-to-host-copy",
        title="Blocking device-to-host copy: `.cpu()`, `.tolist()`, `.numpy()`, `.to('cpu')`",
        what_it_does="Flags copies from the device to the host that block the calling thread: `t.cpu()`, "
        "`t.tolist()`, `t.numpy()`, `t.to('cpu')`, printing a device tensor.",
        why_bad="The host waits for the copy and for everything queued before it on the stream.",
        example="free_slots = device_indices.cpu()",
        use_instead="staging.copy_(device_indices, non_blocking=True); done.record()  # read after done",
        mechanism="A copy into pageable host memory, or any copy without `non_blocking=True`, returns only "
        "after the data has arrived: `cudaMemcpyAsync` D2H + `cudaStreamSynchronize`.",
        fingerprint="`aten::to` › `aten::_to_copy` › `aten::copy_` › `Memcpy DtoH` + `cudaStreamSynchronize`",
        fix="copy into a preallocated pinned buffer with `non_blocking=True`, record an event, and read "
        "the buffer after `event.synchronize()` at a point where waiting is free",
        fix_patterns=("host-copy", "read-once-before-loop", "hoist-loop-invariant", "non-blocking-copy"),
        references=(PINNED_DOC,),
        trace_ops=_TO_COPY_OPS,
        copy_direction="DtoH",
        guard_ops=(GuardOp("_to_copy", when="device-to-host"), GuardOp("ctc_loss", when="tensor-lengths")),
        guard_patches=(GuardPatch("torch.Tensor.tolist"), GuardPatch("torch.Tensor.cpu"),
                       GuardPatch("torch.Tensor.numpy"),
                       # `t.to("cpu")` of a host tensor dispatches nothing: seen where the literal names the host
                       GuardPatch("torch.Tensor.to", when="names-the-host")),
        lint_forms=("method:cpu", "method:tolist", "method:numpy", "to-cpu"),
    ),
    Rule(
        code="SH202",
        name="blocking-host-to-device-copy",
        title="Blocking host-to-device copy: `.cuda()`, `.to('cuda')` without `non_blocking`",
        what_it_does="Flags host-to-device copies that block the calling thread: `t.cuda()`, `t.to(device)` of a "
        "host tensor without `non_blocking=True`, `torch.tensor(data, device='cuda')`, "
        "`device_buf.copy_(host_tensor)`.",
        why_bad="The host thread waits for the transfer, and for the stream work queued before it, instead of "
        "queueing the next kernels.",
        example="batch = torch.tensor(token_ids, device='cuda')",
        use_instead="batch = torch.tensor(token_ids).pin_memory().to('cuda', non_blocking=True)",
        mechanism="PyTorch copies without `non_blocking` through `memcpy_and_sync` (`cudaMemcpyAsync` + "
        "`cudaStreamSynchronize`); ROCm uses the synchronous `hipMemcpyWithStream`.",
        fingerprint="`aten::to` › `aten::_to_copy` › `aten::copy_` › `Memcpy HtoD` + stream sync",
        fix="build on the CPU, `pin_memory()`, then `.to(device, non_blocking=True)`",
        fix_patterns=("constant-factory", "where-to-masked-fill", "stack-device-scalars", "non-blocking-copy"),
        references=(PINNED_DOC, SYNC_DEBUG_DOC),
        trace_ops=(*_TO_COPY_OPS, TraceOp("aten::copy_", role=OpRole.COPY)),
        copy_direction="HtoD",
        guard_ops=(GuardOp("_to_copy", when="host-to-device-blocking"),
                   GuardOp("copy_", when="host-to-device-blocking"),
                   # a host index into a device tensor is copied to the device first (test_sync_warning)
                   GuardOp("index", when="host-index-into-device"),
                   GuardOp("index_put_", when="host-index-into-device"),
                   GuardOp("index_put", when="host-index-into-device"),
                   # ATen's CTC kernel copies its host lengths to the device
                   GuardOp("_ctc_loss"), GuardOp("ctc_loss", when="native-ctc-int-lengths")),
        # builders with `device=`, `torch.cuda.<Typed>Tensor(data)`, and the methods that move host tensors
        lint_forms=(*(f"host-to-device:{name}" for name in TENSOR_BUILDERS),
                    *(f"host-to-device:cuda.{name}" for name in TYPED_CONSTRUCTORS if name != "Tensor"),
                    "host-to-device:new_tensor", "host-to-device:cuda", "host-to-device:to", "copy-into:device"),
    ),
    Rule(
        code="SH203",
        name="pageable-non-blocking-copy",
        title="`non_blocking=True` device-to-host copy into pageable memory",
        what_it_does="Flags asynchronous device-to-host copies that the driver makes synchronous: "
        "`buf.copy_(t, non_blocking=True)` into a host tensor that is not pinned. (`t.to('cpu', "
        "non_blocking=True)` is not one: ATen pins the buffer it allocates.)",
        why_bad="`non_blocking=True` looks free but is not with a pageable destination; the stall is invisible "
        "to `torch.cuda.set_sync_debug_mode`.",
        example="logits_host = torch.empty(logits.shape)  # pageable\n"
        "logits_host.copy_(logits, non_blocking=True)",
        use_instead="logits_host.copy_(logits, non_blocking=True)  # logits_host pinned, allocated once\n"
        "copied.record()  # read logits_host after copied.synchronize() where waiting is free",
        mechanism="The driver cannot DMA straight into pageable memory: `cudaMemcpyAsync` to a pageable "
        "destination returns only once the copy, and the stream work before it, has completed. (From pageable "
        "memory to the device the call returns once the data is staged, without waiting for the device.)",
        fingerprint="`cudaMemcpyAsync` with a `Memcpy DtoH (Device -> Pageable)` activity and no stream sync",
        fix="copy into a pinned buffer (`torch.empty(..., pin_memory=True)`, allocated once) and read it "
        "after an event",
        references=(PINNED_DOC,),
        runtime_calls=tuple(RuntimeCall(name, Blocking.PAGEABLE_DEVICE_TO_HOST) for name in (
            "cudaMemcpyAsync", "cudaMemcpy2DAsync", "cudaMemcpy3DAsync", "hipMemcpyAsync", "hipMemcpyDtoHAsync",
            "cuMemcpyAsync", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync")),
        guard_ops=(GuardOp("_to_copy", when="pageable-non-blocking"),
                   GuardOp("copy_", when="pageable-non-blocking")),
    ),
    Rule(
        code="SH204",
        name="synchronous-memcpy",
        title="Synchronous runtime copy",
        what_it_does="Flags blocking runtime copies (`cudaMemcpy`, `hipMemcpy`, `cuMemcpyDtoH` …) that no aten "
        "copy op explains: extensions and custom kernels.",
        why_bad="The calling thread blocks until the copy, and all prior work it depends on, is finished.",
        example="ext.copy_table_to_host(table)  # calls cudaMemcpy",
        use_instead="copy into pinned memory with cudaMemcpyAsync and record an event",
        mechanism="Synchronous memcpy APIs return after the copy completes.",
        fingerprint="`cudaMemcpy` | `hipMemcpy` | `hipMemcpyWithStream` | `cuMemcpyDtoH_v2` with no enclosing aten "
        "copy op",
        fix="`cudaMemcpyAsync` on a stream with pinned host memory, synchronized by an event",
        runtime_calls=tuple(RuntimeCall(name) for name in (
            "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyPeer", "cudaMemcpyToSymbol",
            "cudaMemcpyFromSymbol", "hipMemcpy", "hipMemcpyWithStream", "hipMemcpyDtoH", "hipMemcpyHtoD",
            "hipMemcpy2D", "cuMemcpy", "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH", "cuMemcpyHtoD",
            "cuMemcpy2D_v2", "cuMemcpy3D_v2", "cuMemcpyPeer")),
    ),
    Rule(
        code="SH205",
        name="blocking-copy-into-host-buffer",
        title="Blocking `host_buf.copy_(device_tensor)`",
        what_it_does="Flags `host_buf.copy_(t)` from a device tensor into an existing host buffer without "
        "`non_blocking=True`.",
        why_bad="Copying into a preallocated buffer avoids the allocation but not the wait: without "
        "`non_blocking` the call returns only after the copy and the stream work before it have finished.",
        example="self.out_host.copy_(next_tokens)",
        use_instead="self.out_host.copy_(next_tokens, non_blocking=True)  # out_host pinned\n"
        "self.copied.record()  # read out_host after self.copied.synchronize()",
        mechanism="`aten::copy_` without `non_blocking` goes through `memcpy_and_sync` (`cudaMemcpyAsync` D2H + "
        "`cudaStreamSynchronize`).",
        fingerprint="`aten::copy_` (not under `aten::_to_copy`) › `Memcpy DtoH` + `cudaStreamSynchronize`",
        fix="pin the buffer once, copy with `non_blocking=True`, record an event and read the buffer after it",
        fix_patterns=("non-blocking-copy",),
        references=(PINNED_DOC,),
        trace_ops=(TraceOp("aten::copy_", role=OpRole.COPY, latent=False),),
        copy_direction="DtoH",
        guard_ops=(GuardOp("copy_", when="device-to-host"),),
        lint_forms=("copy-into:host",),
    ),
)
