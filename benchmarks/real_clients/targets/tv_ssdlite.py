"""Object detection with torchvision: SSDlite (MobileNetV3-Large), untrained, on a 320-pixel image."""

import torch
from torchvision.models.detection import ssdlite320_mobilenet_v3_large


def setup(device: str = "cpu"):
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one intra-op thread: a step's time does not depend on how busy the cores are
    model = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4).eval().to(device)
    images = [torch.rand(3, 320, 320).to(device)]
    return model, images


def step(state):
    model, images = state
    with torch.inference_mode():
        detections = model(images)
    best = detections[0]["scores"].max() if detections[0]["scores"].numel() else None
    return float(best) if best is not None else 0.0
