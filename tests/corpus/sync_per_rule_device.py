"""One loop per copy and explicit-sync rule, on the device: run under the shadow device on a CPU-only machine
(a GPU run syncs at the same lines). Each rule's line carries its code in a comment."""

import torch

REPEATS = 3


def step(state):
    event, stream = state
    x = torch.rand(64, device="cuda")
    host = torch.zeros(64)
    for _ in range(REPEATS):
        x.cpu()  # SH201
    for _ in range(REPEATS):
        torch.tensor([1.0, 2.0], device="cuda")  # SH202
    for _ in range(REPEATS):
        host.copy_(x, non_blocking=True)  # SH203
    for _ in range(REPEATS):
        host.copy_(x)  # SH205
    for _ in range(REPEATS):
        torch.cuda.synchronize()  # SH301
    for _ in range(REPEATS):
        event.synchronize()  # SH302
    for _ in range(REPEATS):
        stream.synchronize()  # SH303


def setup():
    event = torch.cuda.Event()
    event.record()
    return event, torch.cuda.current_stream()
