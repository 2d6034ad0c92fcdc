"""XXH3-64 key hashing, JumpBackHash and JumpHash, as the extension computes them.

A key is a 64-bit integer, taken as it is, or a text (``str``, hashed as its
UTF-8 bytes), ``bytes``-like or :class:`uuid.UUID` (its 16 bytes) key, taken
by its XXH3-64 with seed 0: ``jumpbackhash("abc", n) == jumpbackhash(xxh3_64("abc"), n)``,
exactly as in SQL.
"""

from __future__ import annotations

import uuid

import xxhash

from ._args import MASK32, MASK64, Key, check_int32, key_bits, to_signed64
from ._errors import SubsettingError

__all__ = ["xxh3_64", "key_hash", "jumpbackhash", "jumphash"]

GAMMA = 0x9E3779B97F4A7C15


def splitmix64_mix(z: int) -> int:
    """SplitMix64's finaliser (Stafford's Mix13) of a 64-bit value."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


class SplitMix64:
    """SplitMix64 (Java's SplittableRandom, hash4j's splitMix64_V1) from a 64-bit seed."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next(self) -> int:
        """The next 64-bit draw (unsigned)."""
        self.state = (self.state + GAMMA) & MASK64
        return splitmix64_mix(self.state)


def _bytes_of(key: object) -> bytes | None:
    if isinstance(key, str):
        try:
            return key.encode("utf-8")
        except UnicodeEncodeError as e:
            raise SubsettingError(
                f"text key {key!r} is not valid Unicode text: {e.reason} at position {e.start}") from None
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    if isinstance(key, uuid.UUID):
        return key.bytes
    return None


def xxh3_64(key: str | bytes | bytearray | memoryview | uuid.UUID | int) -> int:
    """XXH3-64 (seed 0) of a key, as the extension's ``xxh3_64``: a signed 64-bit int.

    ``str`` is hashed as its UTF-8 bytes, ``bytes`` as they are, a UUID as its
    16 bytes (as ``xxh3_64(uuid)``).  An ``int`` (in the ``bigint`` range, or
    its unsigned reading) is hashed as its 8 little-endian bytes, as hash4j's
    ``Hashing.xxh3_64().hashLongToLong(v)`` and the ``xxh3_64(bigint)`` that
    issue 35 adds to the extension: use it to spread integer ids over a ring.
    """
    data = _bytes_of(key)
    if data is None:
        if isinstance(key, int) and not isinstance(key, bool):
            data = key_bits(key).to_bytes(8, "little")
        else:
            raise TypeError(
                f"xxh3_64 takes a str, bytes, UUID or int key, got {type(key).__name__} {key!r}")
    return to_signed64(xxhash.xxh3_64_intdigest(data))


def key_hash(key: Key) -> int:
    """The 64 bits by which the extension places a key, as an unsigned int.

    An int is taken as it is (its two's complement bits); a text, bytes or UUID
    key by its XXH3-64.
    """
    data = _bytes_of(key)
    if data is not None:
        return xxhash.xxh3_64_intdigest(data)
    if isinstance(key, int) and not isinstance(key, bool):
        return key_bits(key)
    raise TypeError(
        f"key must be an int, str, bytes or UUID, got {type(key).__name__} {key!r}")


def _check_buckets(buckets: object) -> int:
    return check_int32(buckets, "buckets", 1, "number of buckets")


def jump_back(rng: SplitMix64, n: int) -> int:
    """JumpBackHash (Ertl 2024, Algorithm 6) of n >= 1 buckets, drawing from ``rng``."""
    if n == 1:
        return 0
    v = rng.next()
    u = ((v ^ (v >> 32)) & MASK32) & ((1 << (n - 1).bit_length()) - 1)
    while u:
        q = 1 << (u.bit_length() - 1)
        parity = bin(u).count("1") & 1
        b = q + ((v >> (parity << 5)) & (q - 1))
        mask = (q << 1) - 1
        while True:
            if b < n:
                return b
            w = rng.next()
            b = w & mask
            if b < q:
                break
            if b < n:
                return b
            b = (w >> 32) & mask
            if b < q:
                break
        u ^= q
    return 0


def jumpbackhash(key: Key, buckets: int) -> int:
    """The bucket in [0, buckets) of a key by JumpBackHash, as the extension's ``jumpbackhash``.

    Equal to hash4j's ``ConsistentHashing.jumpBackHash(splitMix64_V1())``.
    ``buckets`` is between 1 and 2147483647.
    """
    n = _check_buckets(buckets)
    return jump_back(SplitMix64(key_hash(key)), n)


def jumphash(key: Key, buckets: int) -> int:
    """The bucket in [0, buckets) of a key by JumpHash (Lamping and Veach 2014), as ``jumphash``."""
    n = _check_buckets(buckets)
    k = key_hash(key)
    b = -1
    j = 0
    while j < n:
        b = j
        k = (k * 2862933555777941757 + 1) & MASK64
        j = int(float(b + 1) * (float(1 << 31) / float((k >> 33) + 1)))
    return b
