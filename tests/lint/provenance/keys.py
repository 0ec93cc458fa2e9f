# ruff: noqa
"""String keys: a dict literal, a keyed write or a record built with keywords holds under each key what was
put there, not what its other keys hold."""
from pathlib import Path
from typing import List, TypedDict

import torch


def literal_keys(n: int):
    mask = torch.zeros(n, dtype=torch.bool, device="cuda")
    state = {"mask": mask, "finished": False, "lens": torch.ones(n, device="cuda").tolist()}  # expect: SH201 high
    if state["finished"]:
        return None
    if state["mask"].any():  # expect: SH110 high
        return None
    for i in range(state["lens"][0]):
        pass
    return state


def written_keys(states: List[dict], n: int):
    for state in states:
        if state["finished"]:
            continue
        state["scores"] = torch.zeros(n, device="cuda")
        state["finished"] = True
        if state["scores"].sum() > 0:  # expect: SH110 high
            state["done"] = 1


def _first(lens, n):
    return [x for x in range(lens, n)]


def make_rows(n: int):
    lens = torch.arange(n, device="cuda")
    rows = [{"len": count, "ids": lens} for count in lens.tolist()]  # expect: SH201 high
    return [_first(row["len"], n) for row in rows]


def spread(extra: dict, n: int):
    merged = {"flag": False, **extra}
    if merged["flag"]:  # what `extra` holds is not known: no finding
        return None
    built = {"t": torch.ones(n, device="cuda"), **{"flag": True}}
    if built.get("flag"):
        return None
    return merged


class VideoInputs(TypedDict):
    pixels: torch.Tensor
    num_patches: torch.Tensor


class Model:
    def _parse(self, **kwargs: object):
        num_patches = kwargs.pop("num_patches", None)
        pixels = kwargs.pop("pixels", None)
        if pixels is None:
            return None
        return VideoInputs(pixels=pixels.cuda(), num_patches=torch.tensor(num_patches))

    def _process(self, video: VideoInputs):
        frames = video["num_patches"].tolist()  # a host tensor: the one caller built it so
        dims = video["pixels"].tolist()  # expect: SH201 high
        return frames, dims

    def embed(self, **kwargs: object):
        video = self._parse(**kwargs)
        if video is None:
            return None
        return self._process(video)  # expect: SH201 medium


def _write_if_changed(path: Path, content: str) -> None:
    # `Path` is imported: the lint cannot read it, and its callers' guesses (`/` with a slice looks like
    # tensor arithmetic) do not overrule it
    if path.is_file() and path.read_text() == content:
        return
    path.write_text(content)


def probe(root: Path, key: str):
    _write_if_changed(root / key[:16], "x")
