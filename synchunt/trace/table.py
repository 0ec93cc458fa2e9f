"""The complete events of a trace as numpy columns, without pandas.

Detection and attribution read these arrays directly; ``Trace.events`` (a pandas DataFrame) is built from them
only when asked for, so analysing a trace never imports pandas. Numbers and ids are arrays; strings and raw
arguments are codes (a signed integer array, int32 or narrower; -1: missing) into a vocabulary of distinct
values, each stored once. A numeric column arriving in another dtype is converted on first read, so every reader
sees the dtypes below. Ids may be given coded (codes into the distinct ids): the id array
is built on first read, and `id_codes` uses the codes as they are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, NamedTuple

import msgspec
import numpy as np


class Column(NamedTuple):
    """One column of the event table: the single list below is what decoding, the table, the cache (and its
    format version) and HTA's import all derive theirs from."""

    name: str
    kind: Literal["float", "int", "id", "coded"]  # float64 / int64 (-1: missing) / pid-tid / codes into values
    arg: str | None = None  # the argument (`synchunt.trace.schema.FastArgs` attribute) it is read from
    derived: bool = False  # computed from the others after decoding (end, the containment tree): never decoded


COLUMNS = (
    Column("name", "coded"), Column("cat", "coded"), Column("pid", "id"), Column("tid", "id"),
    Column("ts", "float"), Column("dur", "float"), Column("end", "float", derived=True),
    Column("correlation", "int", "correlation"), Column("external_id", "int", "external_id"),
    Column("python_id", "int", "python_id"), Column("python_parent_id", "int", "python_parent_id"),
    Column("stream", "int", "stream"), Column("bytes", "int", "bytes"),
    Column("sync_kind", "coded", "cuda_sync_kind"), Column("input_types", "coded", "input_type"),
    Column("concrete_inputs", "coded", "concrete_inputs"), Column("call_stack", "coded", "call_stack"),
    Column("parent", "int", derived=True), Column("depth", "int", derived=True),
)
FRAME_COLUMNS = tuple(column.name for column in COLUMNS)  # the DataFrame's column order


def _of(kind: str) -> tuple[str, ...]:
    return tuple(column.name for column in COLUMNS if column.kind == kind)


FLOATS = _of("float")
INTS = _of("int")
IDS = _of("id")  # int64, or object when some id is a string
CODED = _of("coded")
# The numeric columns a decode fills (the derived ones are computed after it).
FLOAT_KEYS = tuple(c.name for c in COLUMNS if c.kind == "float" and not c.derived)
INT_KEYS = tuple(c.name for c in COLUMNS if c.kind == "int" and not c.derived)

class CodedColumn(msgspec.Struct, frozen=True, eq=False):
    """``codes`` (int8 to int32, -1: missing) into ``vocabulary`` (an object array of distinct values)."""

    codes: np.ndarray
    vocabulary: np.ndarray

    def values(self, rows: Any = None) -> np.ndarray:
        """Each row's value (of ``rows`` only, when given), NaN where missing (what pandas'
        ``Categorical.to_numpy()`` gives)."""
        return np.append(self.vocabulary, np.nan)[self.codes if rows is None else self.codes[rows]]

    def strings(self) -> np.ndarray:
        """Each row's value as ``str`` ("nan" where missing, as ``astype(str)`` gives)."""
        return self.row_strings()[:]

    def row_strings(self) -> RowStrings:
        """`strings` looked up on access: for code that reads a few rows of a big trace."""
        return RowStrings(self.codes, np.array([str(v) for v in self.vocabulary] + ["nan"], dtype=object))


class RowStrings(msgspec.Struct, frozen=True, eq=False):
    """Each row's value as ``str``, indexed like an array (``[i]``, ``[rows]``, ``[mask]``) without holding a
    string per row: the texts of the distinct values, and the rows' codes into them (-1, missing, is "nan")."""

    codes: np.ndarray
    texts: np.ndarray  # the vocabulary's texts, then "nan"

    def __getitem__(self, rows: Any) -> Any:
        return self.texts[self.codes[rows]]

    def __len__(self) -> int:
        return len(self.codes)


def _id_array(column: CodedColumn) -> np.ndarray:
    """Coded ids as int64 when every id is an integer, else as objects (ints and strings)."""
    values = column.vocabulary.tolist()
    if all(type(v) is int for v in values):
        try:
            return np.array(values, dtype=np.int64)[column.codes] if values else np.zeros(len(column.codes), np.int64)
        except OverflowError:
            pass
    return column.vocabulary[column.codes]


_COMPARED_VALUES = 4  # up to this many chosen values, a mask is made by comparisons rather than a gather


def value_mask(codes: np.ndarray, per_value: Iterable[bool]) -> np.ndarray:
    """Row mask from one answer per vocabulary entry (code -1, a missing value, is never selected)."""
    answers = np.fromiter(per_value, dtype=bool)
    chosen = np.flatnonzero(answers).tolist()
    if len(chosen) > _COMPARED_VALUES:
        return np.append(answers, False)[codes]
    # A few values (a category, an op name): one comparison per value is ~10x faster than a gather of every row.
    mask = np.zeros(np.shape(codes), dtype=bool)
    for code in chosen:
        mask |= codes == code
    return mask


def compact(codes: np.ndarray, position_dtype: Any = np.int64) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for non-negative integer codes, without sorting when their range
    is small (a mark per possible code): the distinct codes ascending, and each one's position among them (as
    ``position_dtype``: a narrower one spares a large table a copy of every row in int64)."""
    codes = np.asarray(codes)
    if not len(codes):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=position_dtype)
    size = int(codes.max()) + 1
    if int(codes.min()) < 0 or size > 4 * len(codes) + 4096:
        distinct, inverse = np.unique(codes, return_inverse=True)
        return distinct.astype(np.int64), inverse.reshape(-1).astype(position_dtype)
    present = np.zeros(size, dtype=bool)
    present[codes] = True
    return np.flatnonzero(present), (np.cumsum(present) - 1).astype(position_dtype)[codes]


def first_appearance_codes(items: Iterable[Any], count: int | None = None) -> tuple[np.ndarray, list[Any]]:
    """A code per distinct (hashable) value, numbered by first appearance, and the distinct values (in C: a
    defaultdict whose missing keys get the next number). ``count``: how many ``items`` yields, when not a list."""
    index: defaultdict[Any, int] = defaultdict()
    index.default_factory = index.__len__
    codes = np.fromiter(map(index.__getitem__, items), np.int64, len(items) if count is None else count)
    index.default_factory = None  # the factory is the dict's own method: a cycle only the collector would free
    return codes, list(index)


def vocabulary_array(values: Iterable[Any]) -> np.ndarray:
    """An object array of the values as they are (tuples and lists stay elements)."""
    items = list(values)
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


Source = Any  # an array, a CodedColumn (ids), or a function returning one (read on first use)


class EventTable:
    """The events' columns by name; ``array`` for numbers and ids, ``coded`` for strings and raw arguments.

    A trace decoded with the ``analysis`` field set lacks some columns (`keys` says which it has)."""

    def __init__(self, arrays: Mapping[str, Source], coded: Mapping[str, CodedColumn | Callable[[], CodedColumn]],
                 rows: int):
        self._arrays = dict(arrays)
        self._coded = dict(coded)
        self.rows = rows
        self._id_codes: dict[str, tuple[np.ndarray, list[Any]]] = {}

    def __len__(self) -> int:
        return self.rows

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(key for key in FRAME_COLUMNS if key in self._arrays or key in self._coded)

    def _source(self, key: str) -> Any:
        value = self._arrays[key]
        if callable(value):
            value = self._arrays[key] = value()
        return value

    def array(self, key: str) -> np.ndarray:
        value = self._source(key)
        if isinstance(value, CodedColumn):  # ids given coded: the id array, built once
            self._id_codes.setdefault(key, (value.codes, value.vocabulary.tolist()))
            value = self._arrays[key] = _id_array(value)
        canonical = np.float64 if key in FLOATS else None if key in IDS and value.dtype == object else np.int64
        if canonical is not None and value.dtype != canonical:
            value = self._arrays[key] = value.astype(canonical)
        return value

    def coded(self, key: str) -> CodedColumn:
        value = self._coded[key]
        if callable(value):
            value = self._coded[key] = value()
        return value

    def id_codes(self, key: str) -> tuple[np.ndarray, list[Any]]:
        """An id column (pid, tid) as codes into its distinct values: sorted numbers, or by first appearance
        when some ids are strings. Codes given coded stay in their integer type (int8 from the cache)."""
        source = self._source(key)
        if key not in self._id_codes and isinstance(source, CodedColumn):
            self._id_codes[key] = source.codes, source.vocabulary.tolist()
        if key not in self._id_codes:
            values = self.array(key)
            if values.dtype == object:
                self._id_codes[key] = first_appearance_codes(values.tolist())
            else:
                distinct, codes = compact(values)
                self._id_codes[key] = codes, distinct.tolist()
        return self._id_codes[key]

    def codes_of(self, key: str, wanted: Iterable[Any]) -> np.ndarray:
        """The codes of ``wanted`` values in a coded column (values the trace does not have are left out)."""
        wanted_set = set(wanted)
        return np.array([i for i, v in enumerate(self.coded(key).vocabulary.tolist()) if v in wanted_set],
                        dtype=np.int32)

    def is_in(self, key: str, wanted: Iterable[Any]) -> np.ndarray:
        """Whether each row's value of a coded column is one of ``wanted`` (a lookup per code; -1 is never in)."""
        wanted_set = set(wanted)
        column = self.coded(key)
        return value_mask(column.codes, (v in wanted_set for v in column.vocabulary.tolist()))

    def to_frame(self) -> Any:
        """The columns as a pandas DataFrame (categorical strings), in `FRAME_COLUMNS` order."""
        import pandas as pd

        data: dict[str, Any] = {}
        for key in self.keys:
            if key in CODED:
                column = self.coded(key)
                categories = pd.Index(column.vocabulary, dtype=object)
                data[key] = pd.Categorical.from_codes(column.codes, categories=categories, validate=False)
            else:
                data[key] = self.array(key)
        return pd.DataFrame(data, copy=False)

    def __getstate__(self) -> dict[str, Any]:
        return {"arrays": {k: self._source(k) for k in self._arrays}, "coded": {k: self.coded(k) for k in self._coded},
                "rows": self.rows}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._arrays, self._coded, self.rows = state["arrays"], state["coded"], state["rows"]
        self._id_codes = {}
