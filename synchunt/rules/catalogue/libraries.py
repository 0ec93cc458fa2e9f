"""SH115 — library ops whose CUDA kernel reads the host inside C++, where no CPU trace can show the read.

A CPU run of such an op executes its CPU kernel, which reads its data in place: the trace shows the op and nothing
beneath it. On CUDA the kernel copies to the host and waits. The op's own name is the fingerprint, so a latent
analysis reports it as what it would be on a GPU.
"""

from __future__ import annotations

from synchunt.rules.model import GuardOp, Rule, TraceOp

TORCHVISION_NMS = ("torchvision csrc/ops/cuda/nms_kernel.cu (nms_kernel: `mask.to(at::kCPU)`, then "
                   "`keep.to(order_t.device())`)")

LIBRARY_RULES: tuple[Rule, ...] = (
    Rule(
        code="SH115",
        name="library-kernel-host-read",
        title="Library ops whose CUDA kernel reads the host: `torchvision.ops.nms`",
        what_it_does="Flags `torchvision.ops.nms` and what runs it (`batched_nms`, the post-processing of "
        "torchvision's detection models): its CUDA kernel copies the suppression mask to the host inside C++.",
        why_bad="After the IoU kernel, the host must wait for every kernel queued before it, read the whole mask, "
        "walk it, and send the kept indices back with a second blocking copy: two stream syncs per call, on every "
        "image, invisible in a CPU trace (the CPU kernel reads its data in place).",
        example="keep = torchvision.ops.nms(boxes, scores, iou_threshold=0.5)",
        use_instead="iou = torchvision.ops.box_iou(boxes, boxes).triu_(diagonal=1)\n"
        "keep = iou.amax(dim=0) <= 0.5  # Fast NMS: dense, on the device; boxes sorted by score",
        mechanism="`nms_kernel` computes the IoU bit mask on the device, then `mask.to(at::kCPU)` copies it to the "
        "host (a blocking device-to-host copy), the host walks it, and `keep.to(order_t.device())` copies the kept "
        "indices back (a blocking host-to-device copy). No sync when there are no boxes.",
        fingerprint="`torchvision::nms` › `aten::to` › `aten::_to_copy` › `aten::copy_` › `cudaMemcpyAsync` "
        "(DtoH) + `cudaStreamSynchronize`, then the same host-to-device; on a CPU trace `torchvision::nms` alone",
        fix="keep the suppression on the device with a fixed-size dense form (Fast NMS: `box_iou(b, b).triu_(1)"
        ".amax(0) <= t` on score-sorted boxes), or move the boxes to the host once, at a point where waiting is "
        "free",
        references=(TORCHVISION_NMS,),
        trace_ops=(TraceOp("torchvision::nms"),),  # one sync per call: the mask out and the kept indices back
        # a library op is named with its namespace; the guard intercepts it only once torchvision has loaded it
        guard_ops=(GuardOp("torchvision::nms", when="has-boxes"),),
    ),
)
