# ruff: noqa
"""Host tensors in, host tensor out: a call's result read with what that call passes."""
import torch
from elsewhere import encoder_lengths, Encoder


def output_length(lengths: torch.Tensor, stride: int) -> torch.Tensor:
    return torch.floor(lengths.to(dtype=torch.float) / stride) + 1


def host_copy(x) -> torch.Tensor:
    return x.cpu()  # expect: SH201 medium


class Subsampling(torch.nn.Module):
    def __init__(self, feat_in: int, stride: int):
        super().__init__()
        out = self.calc_length(lengths=torch.tensor(feat_in, dtype=torch.float), stride=stride)
        self.width = int(out)

    def calc_length(self, lengths: torch.Tensor, stride: int) -> torch.Tensor:
        return (lengths + stride) // stride

    @staticmethod
    def downsampled(lengths: torch.Tensor) -> torch.Tensor:
        def conv_out(length: torch.Tensor) -> torch.Tensor:
            return (length - 1) // 2 + 1

        return conv_out(conv_out(lengths))

    @staticmethod
    def token_count(mel_len: int) -> int:
        lengths = torch.tensor(mel_len, dtype=torch.long)
        return int(Subsampling.downsampled(lengths).item())

    def forward(self, x: torch.Tensor, lengths: torch.Tensor):
        n = int(self.calc_length(lengths, 2).max())  # expect: SH109 medium
        m = Subsampling.downsampled(x.sum(-1)).item()  # expect: SH109 medium
        return n, m


def sizes(frames: int, stride: int, hidden: torch.Tensor):
    on_host = output_length(torch.tensor([frames]), stride).item()
    on_device = output_length(hidden.cuda(), stride).item()  # expect: SH109 medium
    copied = host_copy(hidden).tolist()
    return on_host, on_device, copied


def unseen_callees(frames: int, ids: list, hidden: torch.Tensor, lens_cpu):
    n = encoder_lengths(torch.tensor([frames], dtype=torch.float)).item()  # expect: SH109 low
    m = Encoder.subsample(None, torch.tensor([frames])).item()  # expect: SH109 low
    positions, delta = Encoder.rope_index(input_ids=torch.tensor(ids).unsqueeze(0))
    first = delta[0].item()  # expect: SH109 low
    mixed = encoder_lengths(torch.tensor([frames]), hidden).item()  # expect: SH109 medium
    moved = encoder_lengths(torch.tensor([frames]), device="cuda").item()  # expect: SH109 medium
    named = encoder_lengths(lens_cpu, 2, None).tolist()  # expect: SH201 low
    return n, m, first, mixed, moved, named


def patches_per_video(grid_thw: torch.Tensor, counts: list) -> torch.Tensor:
    per_frame = grid_thw.prod(dim=1)
    sums = [per_frame[i : i + 1].sum() for i in counts]
    return torch.stack(sums)


def video_patches(grids: list, counts: list, hidden: torch.Tensor):
    host = patches_per_video(torch.tensor(grids), counts).tolist()
    on_device = torch.stack([row.sum() for row in hidden.cuda()]).tolist()  # expect: SH201 medium
    return host, on_device
