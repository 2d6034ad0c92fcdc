"""Argument checks shared by the modules (the extension's int4/int8 ranges and limits)."""

from __future__ import annotations

import uuid
from typing import Union

from ._errors import SubsettingError

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
INT64_MIN = -(2**63)
UINT64_MAX = 2**64 - 1
MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF

#: A key: a 64-bit integer (taken as it is), or a text, bytes or UUID key (taken by its XXH3-64).
Key = Union[int, str, bytes, bytearray, memoryview, uuid.UUID]


def check_int(value: object, name: str) -> int:
    """``value`` as an int, refusing bool and non-integers with a TypeError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return value


def check_int32(value: object, name: str, minimum: int, what: str | None = None) -> int:
    """An int32 argument of at least ``minimum``; ``what`` words the message ("number of buckets")."""
    v = check_int(value, name)
    label = what or name
    if v < minimum:
        raise SubsettingError(f"{label} must be at least {minimum}, got {v}")
    if v > INT32_MAX:
        raise SubsettingError(f"{label} must be at most {INT32_MAX} (an int4), got {v}")
    return v


def key_bits(key: int) -> int:
    """A 64-bit integer key as the unsigned value of its 64 bits.

    Accepts the ``bigint`` range (-2^63 .. 2^63 - 1) and also 2^63 .. 2^64 - 1,
    the unsigned reading of the same bits (what ``xxhash.xxh3_64_intdigest`` returns).
    """
    k = check_int(key, "key")
    if k < INT64_MIN or k > UINT64_MAX:
        raise SubsettingError(
            f"key must be a 64-bit integer (between {INT64_MIN} and {UINT64_MAX}), got {k}")
    return k & MASK64


def to_signed64(v: int) -> int:
    """The unsigned 64-bit value ``v`` as the extension's ``bigint`` (two's complement)."""
    return v - (1 << 64) if v >= (1 << 63) else v
