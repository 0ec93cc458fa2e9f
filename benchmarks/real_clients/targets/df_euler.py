"""A denoising loop with diffusers: EulerDiscreteScheduler stepping a tiny UNet2DModel (random weights)."""

import torch
from diffusers import EulerDiscreteScheduler, UNet2DModel
from diffusers.utils.torch_utils import randn_tensor


def setup(device: str = "cpu"):
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one intra-op thread: a step's time does not depend on how busy the cores are
    unet = UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                       block_out_channels=(16, 32), down_block_types=("DownBlock2D", "DownBlock2D"),
                       up_block_types=("UpBlock2D", "UpBlock2D"), norm_num_groups=8).eval().to(device)
    scheduler = EulerDiscreteScheduler(num_train_timesteps=1000)
    return unet, scheduler


def step(state):
    unet, scheduler = state
    generator = torch.Generator().manual_seed(7)
    scheduler.set_timesteps(6, device=unet.device)  # as the pipelines do: the timesteps on the model's device
    sample = randn_tensor((1, 3, 16, 16), generator=generator, device=unet.device) * scheduler.init_noise_sigma
    with torch.inference_mode():
        for t in scheduler.timesteps:
            model_input = scheduler.scale_model_input(sample, t)
            noise = unet(model_input, t).sample
            sample = scheduler.step(noise, t, sample, generator=generator).prev_sample
    return sample
