# ruff: noqa
"""A call of a parameter (`run(config)`) calls whatever the caller passed, not the function the parameter
belongs to: it is neither a recursive call nor a call site of that function."""
import torch


def _measure(run, configs, device):
    for config in configs:
        run(config)
        torch.accelerator.synchronize(device)  # expect: SH301 high


def tune(configs, device):
    _measure(lambda config: config, configs, device)  # expect: SH301 medium
    return configs
