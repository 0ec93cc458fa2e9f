"""One function of a step per latent rule, each hitting its sync three times at one line (CPU tensors)."""

import torch

REPEATS = 3


def step(state):
    x, ints, probs, square = state
    for _ in range(REPEATS):
        x[x > 0.5]  # SH101
    for _ in range(REPEATS):
        assign(x.clone(), x)
    for _ in range(REPEATS):
        torch.nonzero(x)  # SH103
    for _ in range(REPEATS):
        torch.masked_select(x, x > 0.5)  # SH104
    for _ in range(REPEATS):
        torch.unique(ints)  # SH105
    for _ in range(REPEATS):
        torch.repeat_interleave(ints, ints)  # SH106
    for _ in range(REPEATS):
        torch.bincount(ints)  # SH107
    for _ in range(REPEATS):
        torch.histc(x)  # SH108
    for _ in range(REPEATS):
        x.sum().item()  # SH109
    for _ in range(REPEATS):
        bool(x.any())  # SH110
    for _ in range(REPEATS):
        torch.multinomial(probs, 1)  # SH111
    for _ in range(REPEATS):
        torch.normal(x, x.abs() + 0.1)  # SH112
    for _ in range(REPEATS):
        torch.equal(x, x)  # SH113
    for _ in range(REPEATS):
        torch.linalg.cholesky(square)  # SH114


def assign(y, x):
    # its own function: a trace names a function by its first line, and two mask-index lines in one would be ambiguous
    y[x > 0.5] = x[x > 0.5] * 0  # SH102 (and SH101 on the right-hand side)


def setup():
    torch.manual_seed(0)
    return (torch.rand(64), torch.randint(0, 8, (32,)), torch.rand(8), torch.eye(4) * 2)
