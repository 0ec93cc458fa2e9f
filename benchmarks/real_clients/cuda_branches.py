"""The branches a library takes on a CUDA tensor where it takes another on a CPU one, replayed on a CPU run.

The truth's ``cuda_path`` pass runs a target with these in place, so the instrument records the ops a GPU run
would reach (the emulation calls the library's own functions, in the library's files: the records keep the
library's lines). Each says where the library decides, at the version the corpus pins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Branch:
    name: str
    where: str
    why: str
    install: Callable[[], Callable[[], None]]  # patches, returns the undo


def _torchvision_batched_nms() -> Callable[[], None]:
    from torchvision.ops import boxes

    original = boxes.batched_nms

    def batched_nms(boxes_, scores, idxs, iou_threshold):
        # boxes.py:86 with boxes on CUDA: the per-class loop only above 100,000 coordinates, else one offset nms
        if boxes_.numel() > 100_000:
            return boxes._batched_nms_vanilla(boxes_, scores, idxs, iou_threshold)
        return boxes._batched_nms_coordinate_trick(boxes_, scores, idxs, iou_threshold)

    boxes.batched_nms = batched_nms

    def undo() -> None:
        boxes.batched_nms = original

    return undo


BRANCHES = {
    "torchvision-batched-nms": Branch(
        "torchvision-batched-nms", "torchvision/ops/boxes.py:86 batched_nms",
        "the per-class loop (_batched_nms_vanilla: torch.unique, one torch.where and one nms per class, a final "
        "torch.where) runs above 4,000 box coordinates on a CPU tensor but only above 100,000 on CUDA; below that "
        "CUDA takes _batched_nms_coordinate_trick: one nms over offset boxes, whose torch.tensor(1).to(boxes) is a "
        "blocking host-to-device copy",
        _torchvision_batched_nms),
}


@contextmanager
def cuda_branches(names: list[str]) -> Iterator[None]:
    with ExitStack() as stack:
        for name in names:
            stack.callback(BRANCHES[name].install())
        yield
