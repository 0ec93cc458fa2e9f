"""Object detection with torchvision: Faster R-CNN (MobileNetV3-Large FPN), untrained, on a 320-pixel image."""

import torch
from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_fpn


def setup(device: str = "cpu"):
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one intra-op thread: a step's time does not depend on how busy the cores are
    model = fasterrcnn_mobilenet_v3_large_fpn(weights=None, weights_backbone=None, num_classes=3,
                                              min_size=320, max_size=320,
                                              rpn_post_nms_top_n_test=100).eval().to(device)
    images = [torch.rand(3, 320, 320).to(device)]
    return model, images


def step(state):
    model, images = state
    with torch.inference_mode():
        detections = model(images)
    return [(d["boxes"].shape[0], d["labels"].tolist()) for d in detections]
