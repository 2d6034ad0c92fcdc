"""JumpBackAnchorHash: JumpBackHash with the removal of any bucket, as the extension's
``jumpbackanchorhash`` and hash4j's ConsistentJumpBackAnchorBucketSetHasher (SplitMix64).

A set of buckets is ``buckets``, the number of buckets ever in use (hash4j's
historicMaxNumBuckets), and the stack of removed buckets, oldest first; or its
state bytes (hash4j's ``getState()``, the extension's ``jumpbackanchorhash_state``):
int32 buckets then int32 removed buckets, all little-endian.
"""

from __future__ import annotations

import struct
from typing import Iterable, Sequence

from ._args import INT32_MAX, MASK32, Key, check_int
from ._errors import LimitExceededError, SubsettingError
from .hashing import SplitMix64, jump_back, key_hash

__all__ = [
    "MAX_REMOVED", "JumpBackAnchorHash", "jumpbackanchorhash", "jumpbackanchorhash_state",
    "jumpbackanchorhash_buckets", "jumpbackanchorhash_removed",
]

#: The most removed buckets a set may hold (the extension's limit, 2^20).
MAX_REMOVED = 1 << 20


def _too_many(count: int) -> LimitExceededError:
    return LimitExceededError(
        f"too many removed buckets: {count}",
        detail=f"At most {MAX_REMOVED} buckets can be removed.")


class JumpBackAnchorHash:
    """A decoded set of buckets, ready for lookups (build it once, look many keys up).

    >>> s = JumpBackAnchorHash(10, [3, 7])
    >>> s.bucket("user-42") in set(range(10)) - {3, 7}
    True
    """

    __slots__ = ("_buckets", "_removed", "_entry", "_next_bucket", "_next_entry")

    def __init__(self, buckets: int, removed: Iterable[int] = (), *, _from_state: bool = False) -> None:
        b = check_int(buckets, "buckets")
        if b > INT32_MAX:
            raise SubsettingError(f"number of buckets must be at most {INT32_MAX} (an int4), got {b}")
        if b < 0:
            if _from_state:
                raise SubsettingError(
                    f"invalid jumpbackanchorhash state: number of buckets is negative, got {b}")
            raise SubsettingError(f"number of buckets must not be negative, got {b}")
        rem = [check_int(r, "removed bucket") for r in removed]
        if len(rem) > MAX_REMOVED:
            raise _too_many(len(rem))
        where = "removed bucket {} of the state" if _from_state else "element {} of the removed buckets"
        entry: dict[int, int] = {}
        for pos, r in enumerate(rem):
            if r < 0 or r >= b:
                if b == 0:
                    raise SubsettingError(f"removed bucket {r} is out of range for 0 buckets",
                                          detail="With 0 buckets no bucket can be removed.")
                raise SubsettingError(
                    f"removed bucket {r} is out of range for {b} buckets",
                    detail=f"Removed buckets must be between 0 and {b - 1}; "
                           f"{where.format(pos + 1)} is {r}.")
        for pos, r in sorted(enumerate(rem), key=lambda t: (t[1], t[0])):
            if r in entry:
                which = ("Removed buckets {} and {} of the state are both {}." if _from_state
                         else "Elements {} and {} of the removed buckets are both {}.")
                raise SubsettingError(
                    f"bucket {r} is removed twice",
                    detail=which.format(entry[r] + 1, pos + 1, r),
                    hint="A bucket can be removed only once; remove it again only after adding it back.")
            entry[r] = pos
        self._buckets = b
        self._removed = tuple(rem)
        self._entry = entry
        # Replay the removals: removal r leaves n = buckets - 1 - r buckets; the bucket
        # that held place n of the view n + 1 takes the removed bucket's place.
        self._next_bucket = [0] * len(rem)
        self._next_entry = [-1] * len(rem)
        for r in range(len(rem)):
            n = b - 1 - r
            self._next_bucket[r], self._next_entry[r] = self._follow(n, entry.get(n, -1), n + 1)

    def _follow(self, place: int, e: int, view: int) -> tuple[int, int]:
        """The bucket at ``place`` of the view of ``view`` buckets, and its entry (or -1)."""
        bucket = place
        limit = self._buckets - 1 - view
        while e >= 0 and e <= limit:       # entry_view(e) = buckets - 1 - e >= view
            bucket = self._next_bucket[e]
            e = self._next_entry[e]
        return bucket, e

    @classmethod
    def from_state(cls, state: bytes | bytearray | memoryview) -> "JumpBackAnchorHash":
        """The set of state bytes (hash4j's ``getState()``)."""
        if not isinstance(state, (bytes, bytearray, memoryview)):
            raise TypeError(f"state must be bytes, got {type(state).__name__}")
        data = bytes(state)
        if len(data) < 4 or len(data) % 4 != 0:
            raise SubsettingError(
                f"invalid jumpbackanchorhash state: length {len(data)} is not a positive multiple of 4",
                detail="A state is hash4j's getState(): the number of buckets, then each removed bucket "
                       "oldest first, as 4-byte little-endian integers.")
        values = struct.unpack(f"<{len(data) // 4}i", data)
        if values[0] >= 0 and len(values) - 1 > MAX_REMOVED:
            raise _too_many(len(values) - 1)
        return cls(values[0], values[1:], _from_state=True)

    @property
    def buckets(self) -> int:
        """The number of buckets ever in use (hash4j's historicMaxNumBuckets)."""
        return self._buckets

    @property
    def removed(self) -> tuple[int, ...]:
        """The removed buckets, oldest first."""
        return self._removed

    @property
    def state(self) -> bytes:
        """The state bytes, as ``jumpbackanchorhash_state(buckets, removed)``."""
        return struct.pack(f"<{1 + len(self._removed)}i", self._buckets, *self._removed)

    def __len__(self) -> int:
        """The number of working buckets."""
        return self._buckets - len(self._removed)

    def __contains__(self, bucket: object) -> bool:
        return (isinstance(bucket, int) and 0 <= bucket < self._buckets
                and bucket not in self._entry)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JumpBackAnchorHash):
            return NotImplemented
        return (self._buckets, self._removed) == (other._buckets, other._removed)

    def __hash__(self) -> int:
        return hash((self._buckets, self._removed))

    def __repr__(self) -> str:
        return f"JumpBackAnchorHash({self._buckets}, {list(self._removed)!r})"

    def bucket(self, key: Key) -> int:
        """The bucket of a key, as ``jumpbackanchorhash(key, buckets, removed)``."""
        h = key_hash(key)
        b = self._buckets
        m = len(self._removed)
        if b == 0:
            raise SubsettingError("number of buckets must be at least 1, got 0")
        if b <= m:
            raise SubsettingError(f"all {b} buckets are removed",
                                  detail="A key needs at least one bucket that is not removed.",
                                  hint="Add a bucket back with add_bucket().")
        rng = SplitMix64(h)
        bucket = jump_back(rng, b)
        entry = self._entry.get(bucket, -1)
        while entry >= 0:
            view = b - 1 - entry
            if view == 0:
                break
            place = _uniform_below(rng, view)
            bucket, entry = self._follow(place, self._entry.get(place, -1), view)
        return bucket

    def add_bucket(self) -> tuple["JumpBackAnchorHash", int]:
        """hash4j's ``addBucket()``: the new set and the bucket added (the last removed one, or a new one)."""
        if self._removed:
            return JumpBackAnchorHash(self._buckets, self._removed[:-1]), self._removed[-1]
        if self._buckets == INT32_MAX:
            raise LimitExceededError(
                f"cannot add a bucket to {self._buckets} buckets with none removed",
                detail="Bucket numbers are int4 values, so there are at most 2147483647 buckets.")
        return JumpBackAnchorHash(self._buckets + 1), self._buckets

    def remove_bucket(self, bucket: int) -> "JumpBackAnchorHash":
        """hash4j's ``removeBucket(bucket)``: the new set."""
        x = check_int(bucket, "bucket")
        b, m = self._buckets, len(self._removed)
        if 0 <= x < b and x in self._entry:
            raise SubsettingError(f"bucket {x} is already removed",
                                  detail="Only a bucket of the set can be removed.")
        if b == 0:
            raise SubsettingError(f"bucket {x} is out of range for 0 buckets", detail="The set is empty.")
        if x < 0 or x >= b:
            raise SubsettingError(f"bucket {x} is out of range for {b} buckets",
                                  detail=f"The buckets of the set are between 0 and {b - 1}.")
        if b - 1 == m:
            return JumpBackAnchorHash(0)
        if x == b - 1 and m == 0:
            return JumpBackAnchorHash(b - 1)
        if m >= MAX_REMOVED:
            raise _too_many(m + 1)
        return JumpBackAnchorHash(b, self._removed + (x,))


def _uniform_below(rng: SplitMix64, bound: int) -> int:
    """hash4j's uniformInt(bound): Lemire's method with 32-bit products."""
    product = (rng.next() & MASK32) * bound
    if (product & MASK32) < bound:
        threshold = (1 << 32) % bound
        while (product & MASK32) < threshold:
            product = (rng.next() & MASK32) * bound
    return product >> 32


def jumpbackanchorhash(key: Key, buckets: int | bytes | bytearray | memoryview,
                       removed: Sequence[int] = ()) -> int:
    """The bucket of a key, as the extension's ``jumpbackanchorhash(key, buckets, removed)``
    or, given state bytes, ``jumpbackanchorhash(key, state)``.

    Decodes the set on every call: for many keys build a :class:`JumpBackAnchorHash` once.
    """
    if isinstance(buckets, (bytes, bytearray, memoryview)):
        if removed:
            raise TypeError("removed buckets are given by the state; pass no removed list with a state")
        return JumpBackAnchorHash.from_state(buckets).bucket(key)
    return JumpBackAnchorHash(buckets, removed).bucket(key)


def jumpbackanchorhash_state(buckets: int, removed: Sequence[int] = ()) -> bytes:
    """The state bytes of a set, as ``jumpbackanchorhash_state(buckets, removed)`` (checked as it)."""
    return JumpBackAnchorHash(buckets, removed).state


def jumpbackanchorhash_buckets(state: bytes | bytearray | memoryview) -> int:
    """The number of buckets of state bytes, as ``jumpbackanchorhash_buckets(state)``."""
    return JumpBackAnchorHash.from_state(state).buckets


def jumpbackanchorhash_removed(state: bytes | bytearray | memoryview) -> list[int]:
    """The removed buckets of state bytes, as ``jumpbackanchorhash_removed(state)``."""
    return list(JumpBackAnchorHash.from_state(state).removed)
