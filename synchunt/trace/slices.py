"""One slice of a trace's event array (a JSON array of whole events) → its columns.

Module-level and picklable, so worker processes run it: on slices handed to them, or on their own byte range
of the file (`synchunt.trace.ranges`).
"""

from __future__ import annotations

import msgspec

from synchunt.trace import schema
from synchunt.trace.columns import ColumnChunk, reduce_fast, reduce_loose
from synchunt.trace.schema import ALL_FIELDS, FieldSet


class SliceError(Exception):
    """A slice that is not a JSON array of events."""


def decode_slice(payload: bytes | memoryview, fields: FieldSet = ALL_FIELDS) -> ColumnChunk:
    """One slice (a JSON array of events) → its columns. Module-level so worker processes can run it."""
    try:
        return reduce_fast(schema.FAST_EVENTS_DECODERS[fields.name].decode(payload), fields)
    except msgspec.ValidationError:
        pass
    except msgspec.DecodeError as error:
        raise SliceError(str(error)) from None
    except RecursionError:
        raise SliceError("nested too deeply") from None
    try:
        return reduce_loose(schema.LOOSE_EVENTS_DECODER.decode(payload), fields)
    except (msgspec.DecodeError, RecursionError) as error:
        raise SliceError(str(error) or "nested too deeply") from None
