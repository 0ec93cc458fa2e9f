"""Generated inputs: one generator per feed kind, each satisfying the condition its pattern states.

Every generator takes the case (its random source and size), the feed, the torch module and the values already
generated (``like`` is evaluated among them), and returns a value on the check's device. Sizes run from empty
up; dtypes vary across cases.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from synchunt.fixes.model import Feed

SIZES = (0, 1, 2, 3, 5, 8, 13, 32)
CASES = 16


@dataclass(frozen=True)
class Case:
    number: int
    device: str

    @property
    def rng(self) -> random.Random:
        return random.Random(1000 + self.number)

    def size(self, feed: Feed) -> int:
        return max(SIZES[self.number % len(SIZES)], feed.min_size)


class AnyKey:
    """A mapping that answers every key with the same value (``scores[idx]`` for any ``idx``)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __getitem__(self, key: object) -> Any:
        return self.value


Generator = Callable[[Case, Feed, Any, Any, random.Random], Any]
GENERATORS: dict[str, Generator] = {}


def generator(kind: str) -> Callable[[Generator], Generator]:
    def register(function: Generator) -> Generator:
        GENERATORS[kind] = function
        return function

    return register


def _dtypes(torch: Any, kind: str | None, case: Case) -> Any:
    choices = {"float": (torch.float32, torch.float64), "int": (torch.int64, torch.int32), "bool": (torch.bool,),
               None: (torch.float32, torch.float64, torch.int64)}[kind]
    return choices[case.number % len(choices)]


def _random(torch: Any, shape: tuple[int, ...], dtype: Any, rng: random.Random, device: str) -> Any:
    generator_ = torch.Generator().manual_seed(rng.randrange(2**31))
    if dtype == torch.bool:
        return (torch.rand(shape, generator=generator_) < 0.5).to(device)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=generator_, dtype=dtype).to(device)
    return torch.randint(-5, 6, shape, generator=generator_, dtype=dtype).to(device)


def _shape(like: Any, size: int, case: Case, feed: Feed) -> tuple[int, ...]:
    shape = getattr(like, "shape", None)
    if shape is not None:
        return tuple(shape)
    ndim = feed.ndim if feed.ndim is not None else 1 + case.number % 2
    return (size, 3, 2)[:ndim] if ndim else ()


@generator("tensor")
def _tensor(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return _random(torch, _shape(like, case.size(feed), case, feed), _dtypes(torch, feed.dtype, case), rng, case.device)


@generator("scalar_tensor")
def _scalar_tensor(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return _random(torch, (), _dtypes(torch, feed.dtype, case) if feed.dtype else torch.float32, rng, case.device)


@generator("mask")
def _mask(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    shape = _shape(like, case.size(feed), case, feed)
    if case.number % 5 == 3:  # all false and all true are the edges a dense rewrite must get right
        return torch.zeros(shape, dtype=torch.bool, device=case.device)
    if case.number % 5 == 4:
        return torch.ones(shape, dtype=torch.bool, device=case.device)
    return _random(torch, shape, torch.bool, rng, case.device)


@generator("modulus")
def _modulus(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return (1, 2, 3, 4, 8)[case.number % 5]


@generator("residue")
def _residue(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return rng.randrange(int(like))


@generator("aligned_runs")
def _aligned_runs(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    """Whole runs of ``like`` consecutive values, each from a multiple of ``like``; pages sorted or shuffled."""
    width = int(like)
    pages = rng.sample(range(64), min(case.size(feed), 64))
    if case.number % 2 == 0:
        pages.sort()
    values = [page * width + offset for page in pages for offset in range(width)]
    return torch.tensor(values, dtype=_dtypes(torch, "int", case), device=case.device)


@generator("positions")
def _positions(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    length = len(like) if like is not None else case.size(feed)
    return torch.arange(length, device=case.device)


@generator("bound")
def _bound(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return rng.randrange(len(like) + 3)


@generator("number")
def _number(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return rng.randrange(-3, 9) if feed.dtype == "int" else round(rng.uniform(0.5, 3.0), 3)


@generator("index")
def _index(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return 0


@generator("counts")
def _counts(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return torch.tensor([rng.randrange(5) for _ in range(case.size(feed))], dtype=torch.int64, device=case.device)


@generator("count_list")
def _count_list(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return [rng.randrange(5) for _ in range(case.size(feed))]


@generator("small_ints")
def _small_ints(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return torch.tensor([rng.randrange(6) for _ in range(case.size(feed))], dtype=torch.int64, device=case.device)


def _scalars(case: Case, feed: Feed, torch: Any, rng: random.Random, length: int) -> list[Any]:
    return [_random(torch, (), torch.float32, rng, case.device) for _ in range(length)]


@generator("scalar_list")
def _scalar_list(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return _scalars(case, feed, torch, rng, case.size(feed))


@generator("scalar_rows")
def _scalar_rows(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return _scalars(case, feed, torch, rng, len(like) if like is not None else min(case.size(feed), 16))


@generator("scalar_table")
def _scalar_table(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return AnyKey(_scalars(case, feed, torch, rng, case.size(feed)))


@generator("tensor_list")
def _tensor_list(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    return [_random(torch, (rng.randrange(1, 6),), torch.float32, rng, case.device) for _ in range(case.size(feed))]


@generator("elementwise")
def _elementwise(case: Case, feed: Feed, torch: Any, like: Any, rng: random.Random) -> Any:
    def elementwise(value: Any, *others: Any, **named: Any) -> Any:
        result = value * 2 + 1
        for other in (*others, *named.values()):
            result = result + other
        return result

    return elementwise
