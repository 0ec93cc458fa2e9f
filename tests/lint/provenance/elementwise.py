# ruff: noqa
"""An elementwise op with a tensor provably on the host stays on the host, whatever the other side is
(torch refuses to mix devices); device evidence on either side still says device."""
import torch


def split_modalities(input_ids: torch.Tensor, is_multimodal: torch.Tensor, video_id: int):
    ids_cpu = input_ids.cpu()  # expect: SH201 medium
    is_video = is_multimodal & (ids_cpu == video_id)
    num_video = is_video.sum().item()
    on_device = is_multimodal & (input_ids == video_id)
    num_device = on_device.sum().item()  # expect: SH109 medium
    mixed = input_ids.cuda() + ids_cpu
    total = mixed.sum().item()  # expect: SH109 high
    return num_video, num_device, total
