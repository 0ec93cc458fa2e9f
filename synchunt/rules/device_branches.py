"""Reviewed device branches: library code that takes another path on a GPU than on the CPU.

A CPU run follows the CPU's path. Where a library branches on the device, the syncs a CPU trace shows inside that
branch are the CPU's, not what a GPU run would do; each entry names the function (as a trace names its file) and
says what a GPU run does instead, with the source it was read from. A sync whose stack passes through one is
marked with that note in every output.
"""

from __future__ import annotations

import msgspec


class DeviceBranch(msgspec.Struct, frozen=True):
    """A function a CPU run enters on a different condition than a GPU run; ``note`` says how."""

    file: str  # the end of the file's path, as traces name it (``torchvision/ops/boxes.py``)
    function: str
    note: str
    source: str


DEVICE_BRANCHES: tuple[DeviceBranch, ...] = (
    DeviceBranch(
        "torchvision/ops/boxes.py", "_batched_nms_vanilla",
        "torchvision takes this per-class loop on CUDA only above 100,000 box coordinates (on the CPU above 4,000); "
        "below that a GPU run calls _batched_nms_coordinate_trick (one nms, no per-class unique/where), so these "
        "syncs are the CPU's path",
        "torchvision/ops/boxes.py batched_nms (`boxes.numel() > (4000 if boxes.device.type == 'cpu' else 100_000)`)"),
)


def branch_note(files_and_functions: list[tuple[str, str]]) -> str | None:
    """The note of the first reviewed device branch among these frames (file as a trace names it, function)."""
    for file, function in files_and_functions:
        normalized = file.replace("\\", "/")
        for branch in DEVICE_BRANCHES:
            if function == branch.function and (normalized == branch.file or normalized.endswith("/" + branch.file)):
                return branch.note
    return None
