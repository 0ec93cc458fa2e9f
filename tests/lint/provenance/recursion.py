# ruff: noqa
"""A recursive call handing a parameter on passes what the outer calls passed: it neither agrees nor
disagrees with them."""
import torch


def traverse_tree(next_token: torch.Tensor, next_sibling: torch.Tensor):
    def dfs(curr: int, next_token: torch.Tensor, next_sibling: torch.Tensor):
        if next_token[curr] != -1:
            dfs(int(next_token[curr]), next_token, next_sibling)
        if next_sibling[curr] != -1:
            dfs(int(next_sibling[curr]), next_token, next_sibling)

    dfs(0, next_token, next_sibling)


def generate_bitmask(next_token_cpu, next_sibling_cpu, count: int):
    for i in range(count):
        traverse_tree(next_token_cpu[i], next_sibling_cpu[i])


def _walk(lengths: torch.Tensor, depth: int):
    if lengths[depth] > 0:  # expect: SH110 medium
        lengths = lengths.cuda()
        _walk(lengths, depth - 1)  # expect: SH110 low


def start_walk(lengths_cpu):
    _walk(lengths_cpu, 3)  # read with what it passes (a host tensor, an int), `_walk` reads no device value
