# ruff: noqa
"""`torch.load` gives back whatever was saved: an object of unknown kind (a dict, a model, a list), which says
nothing about a tensor until the code shows one; with `map_location="cpu"` the tensors it holds are on the host."""
import torch


def load_value(path):
    x = torch.load(path, weights_only=False)
    if isinstance(x, dict) and "value" in x:
        x = x["value"]
    return x


def load_to_host(path):
    saved = torch.load(path, map_location="cpu")
    return saved.sum().item()


def load_to_device(path, device):
    saved = torch.load(path).to(device)
    return saved.sum().item()  # expect: SH109 high


def load_and_read(path):
    saved = torch.load(path)
    return saved.item()  # expect: SH109 medium
