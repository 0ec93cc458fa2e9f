# ruff: noqa
"""Values that are never tensors: a comparison with a string (`backend.get_name() == "FLASH"`), and the
columns of a pandas or polars frame (`df["name"].unique()`)."""
import polars as pl
import torch


def backend_needs_padding(self, lengths: torch.Tensor):
    if self.backend.get_name() == "TRTLLM_RAGGED" and self.mode != "decode":
        return lengths
    if lengths.max() == 0:  # expect: SH110 medium
        return None
    return lengths


def names(df: pl.DataFrame):
    return set(df["name"].unique().to_list()), sorted(df["step"].unique().to_list())


def sentinel(x: torch.Tensor):
    return "unset" if x == "unset" else x


def tensor_names(frame, ids: torch.Tensor):
    return torch.unique(ids).tolist()  # expect: SH105 medium, SH201 medium
