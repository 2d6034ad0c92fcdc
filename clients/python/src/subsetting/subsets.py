"""Backend subsetting (Reinventing Backend Subsetting at Google, ACM Queue 2023):
Ringsteady and Rocksteadier, as the extension's ``ringsteady_subset`` and
``rocksteadier_subset``.

Frontend task ``frontend`` of a job connects to ``subset_size`` of its
``backends`` backend tasks; a subset is a prefix of every larger one.
"""

from __future__ import annotations

from ._args import MASK64, check_int, check_int32
from ._errors import LimitExceededError, SubsettingError
from ._shuffle import lot_rows, lot_seed, plan

__all__ = ["ringsteady_subset", "rocksteadier_subset", "MAX_SUBSET_MEMBERS", "MAX_LOT_SIZE"]

#: The most members a subset may have (the extension's limit, 2^24).
MAX_SUBSET_MEMBERS = 1 << 24
#: The largest lot size of Rocksteadier.
MAX_LOT_SIZE = 65536
#: The most shuffle steps one Rocksteadier subset may take (the extension's limit, 2^30).
MAX_ROCKSTEADIER_STEPS = 1 << 30


def _reverse64(x: int) -> int:
    return int(f"{x:064b}"[::-1], 2)


def _width(backends: int) -> int:
    """w = ceil(log2 N), the number of bits of a ring position."""
    return 0 if backends <= 1 else (backends - 1).bit_length()


def _count_congruent(backends: int, residue: int, bits: int) -> int:
    """How many backends below N are congruent to ``residue`` modulo 2^bits."""
    return ((backends - residue - 1) >> bits) + 1 if residue < backends else 0


def _count_backends_before(backends: int, width: int, limit: int) -> int:
    if limit >> width:
        return backends
    count = 0
    residue = 0
    for s in range(width):
        if (limit >> (width - 1 - s)) & 1:
            count += _count_congruent(backends, residue, s + 1)
            residue |= 1 << s
    return count


def _start_rank(frontend: int, backends: int, backend_scaling: bool) -> int:
    position = _reverse64(frontend)
    width = _width(backends)
    if backend_scaling:
        product = position * backends
        rank = (product >> 64) + ((product & MASK64) != 0)
    else:
        if width == 0:
            limit = int(position != 0)
        else:
            limit = (position >> (64 - width)) + (((position << width) & MASK64) != 0)
        rank = _count_backends_before(backends, width, limit)
    return 0 if rank == backends else rank


class _Cursor:
    """A place on the ring order of N backends (the bit-reversal order of w bits, without those >= N)."""

    __slots__ = ("backends", "width", "backend")

    def __init__(self, backends: int, rank: int) -> None:
        width = _width(backends)
        backend = 0
        remaining = rank
        for s in range(width):
            below = _count_congruent(backends, backend, s + 1)
            if remaining >= below:
                remaining -= below
                backend |= 1 << s
        self.backends = backends
        self.width = width
        self.backend = backend

    def _increment(self, index: int) -> int:
        zeros = ~index & ((1 << self.width) - 1)
        if zeros == 0:
            return 0
        highest_zero = 1 << (zeros.bit_length() - 1)
        return (index & (highest_zero - 1)) | highest_zero

    def next(self) -> int:
        backend = self.backend
        nxt = self._increment(backend)
        if nxt >= self.backends:
            nxt = self._increment(nxt)
        self.backend = nxt
        return backend


def _subset_arguments(frontend: object, backends: object, subset_size: object) -> tuple[int, int, int]:
    f = check_int32(frontend, "frontend", 0)
    n = check_int32(backends, "backends", 1, "number of backends")
    k = check_int32(subset_size, "subset_size", 0, "subset size")
    return f, n, k


def _check_members(n: int, k: int) -> None:
    members = min(k, n)
    if members > MAX_SUBSET_MEMBERS:
        raise LimitExceededError(f"subset of {members} backends is too large",
                                 detail=f"A subset has at most {MAX_SUBSET_MEMBERS} members.")


def ringsteady_subset(frontend: int, backends: int, subset_size: int,
                      backend_scaling: bool = True) -> list[int]:
    """The backends of a frontend by Ringsteady, as ``ringsteady_subset(frontend, backends,
    subset_size, backend_scaling)``: min(subset_size, backends) backends in ring order.
    """
    f, n, k = _subset_arguments(frontend, backends, subset_size)
    if not isinstance(backend_scaling, bool):
        raise TypeError(f"backend_scaling must be a bool, got {type(backend_scaling).__name__}")
    _check_members(n, k)
    cursor = _Cursor(n, _start_rank(f, n, backend_scaling))
    return [cursor.next() for _ in range(min(k, n))]


def _shuffle_steps(backends: int, count: int, lot_size: int) -> int:
    if count == 0:
        return 0
    lots = (backends - 1) // lot_size + 1
    return (min(count + 1, lots) + 1) * lot_size


def rocksteadier_subset(frontend: int, backends: int, subset_size: int, lot_size: int = 10) -> list[int]:
    """The backends of a frontend by Rocksteadier, as ``rocksteadier_subset(frontend, backends,
    subset_size, lot_size)``: min(subset_size, backends) backends in the order read.
    """
    f, n, k = _subset_arguments(frontend, backends, subset_size)
    L = check_int(lot_size, "lot_size")
    if L < 1 or L > MAX_LOT_SIZE:
        raise SubsettingError(f"lot size must be between 1 and {MAX_LOT_SIZE}, got {L}")
    _check_members(n, k)
    count = min(k, n)
    steps = _shuffle_steps(n, count, L)
    if steps > MAX_ROCKSTEADIER_STEPS:
        raise LimitExceededError(
            f"rocksteadier subset of {count} backends in lots of {L} is too large",
            detail=f"It would shuffle {steps} tasks; the limit is {MAX_ROCKSTEADIER_STEPS}.",
            hint="Use a smaller lot size or subset size.")
    if count == 0:
        return []
    lots = (n - 1) // L + 1
    last_lot = lots - 1
    padding = lots * L - n
    frontend_lot = f // L
    first_row = _Cursor(L, f % L).next()

    pass_start = [0]
    if count <= lots - 1:
        passes = 1
    else:
        last_rows = [(first_row + p) % L for p in range(min(L, -(-count // (lots - 1)) if lots > 1 else L))]
        last_lanes = plan(L, last_rows, 1)
        last = dict(zip(last_rows, lot_rows(last_lanes, lot_seed(frontend_lot, last_lot), L, last_rows,
                                            min(last_rows))))
        passes = 0
        while pass_start[passes] < count:
            row = (first_row + passes) % L
            pass_start.append(pass_start[passes] + lots - (last[row] >= L - padding))
            passes += 1
    pass_filled = [0] * passes
    lowest_row = first_row if first_row + passes <= L else 0
    rows = [(first_row + p) % L for p in range(passes)]
    # the lots visited: at most count + 1 (each gives a task to the first pass, but the last lot)
    lanes = plan(L, rows, min(lots, count + 1))

    out = [0] * count
    cursor = _Cursor(lots, _start_rank(frontend_lot, lots, True))
    written = 0
    real = L - padding       # the tasks of the last lot
    for _visit in range(lots):
        if written >= count:
            break
        lot = cursor.next()
        offsets = lot_rows(lanes, lot_seed(frontend_lot, lot), L, rows, lowest_row)
        base = lot * L
        for p in range(passes):
            offset = offsets[p]
            if lot == last_lot and offset >= real:
                continue
            index = pass_start[p] + pass_filled[p]
            pass_filled[p] += 1
            if index < count:
                out[index] = base + offset
                written += 1
    return out
