"""Rows of Rocksteadier's lot shuffles, as the extension computes them, without
walking every Fisher-Yates step in Python when a lot is large.

The extension (src/core/rocksteadier.c) shuffles a lot of L tasks with the
Fisher-Yates steps i = L - 1 down to 1 (down to the lowest row read): step i
draws r_i = high64(m_i * (i + 1)), m_i = mix(seed + GAMMA * (L - i)) (SplitMix64:
any step's draw can be computed by itself), and swaps positions i and r_i.  The
C code walks those steps, L - q of them for rows from q on: 24,576 a lot and 7.4
million in all for ``rocksteadier_subset(5, 2147483647, 300, lot_size => 65536)``,
20 to 45 ms in C, and 3.4 s when this client walked them the same way (0.45 us a
step on a quiet machine, as profiled nearly all of it the draws' arithmetic and
calls, not the list of the lot).

A row q is final after step q: its task is the one that stood at position r_q
just before step q.  That one is found backwards: the last step before step q
that moved position x (the smallest i > q with r_i = x) put there the task that
stood at position i just before step i, and so on:

    x = r_q (or 0 for row 0, which no step draws), b = q
    while some i > b has r_i = x: take the smallest, x = b = i
    the row's task is x

So a row still needs every draw r_i, i > q, but only to compare it with x, and
that is done for many steps at once: each step is a 128-bit lane of one Python
int (a piece of PIECE steps), and the int's own C loops (add, shift, mask, xor,
multiply by a constant; a lane's 64-bit value times a 64-bit constant fits its
128 bits, so no lane spills into the next) compute every lane's mix.  The
comparison is done in the lanes too, loosely (a window a little wider than the
draws that give x), and each lane it picks is checked exactly, one draw in plain
Python, so the answers are the extension's, bit for bit.  About 50 ns a step.

Where NumPy is installed (the client's optional dependency, Debian's
python3-numpy), ``Draws`` computes the draws of every step of a lot at once in
64-bit arrays instead, exactly (the mix wraps modulo 2^64 as the C code's
does, and high64(m * (i + 1)) is put together from 32-bit halves, exact as
i + 1 <= 65,536), and follows each row's chain with array comparisons: about 11
ns a step, within a few times the extension's C for the call above.

``plan`` picks per call these lanes (or draws) or the plain walk (``shuffle_walk``,
the C code's loop), whichever should be quicker: the lanes win on lots of more
than a few dozen tasks read at a few rows, the walk on small lots or many rows.
"""

from __future__ import annotations

import array
import math
import sys

from ._args import MASK64
from .hashing import GAMMA, splitmix64_mix

try:
    import numpy
except ImportError:             # the lanes then: pure Python
    numpy = None

C1 = 0xBF58476D1CE4E5B9        # SplitMix64's mix constants
C2 = 0x94D049BB133111EB
LANE = 128                      # bits of a lane
PIECE = 512                     # lanes of one packed int (8 KiB: the ints stay in the CPU's caches)
TWO64 = 1 << 64
FINE = 12                       # the window's start is counted in steps of about 2^(64 - FINE) / (i + 1)


def lot_seed(frontend_lot: int, lot: int) -> int:
    """The SplitMix64 state a lot's shuffle starts from."""
    return splitmix64_mix(((frontend_lot << 32) | lot) & MASK64)


def draw(seed: int, lot_size: int, i: int) -> int:
    """r_i, the position step i of a lot's shuffle swaps with position i."""
    z = (seed + GAMMA * (lot_size - i)) & MASK64
    z = ((z ^ (z >> 30)) * C1) & MASK64
    z = ((z ^ (z >> 27)) * C2) & MASK64
    return ((z ^ (z >> 31)) * (i + 1)) >> 64


def shuffle_walk(seed: int, lot_size: int, lowest_row: int) -> list[int]:
    """Rows lowest_row .. lot_size - 1 of the shuffle (the rows below left unfinished), step by step
    as the C code walks them."""
    perm = list(range(lot_size))
    state = seed
    c1, c2, mask = C1, C2, MASK64
    for i in range(lot_size - 1, max(lowest_row, 1) - 1, -1):
        state = (state + GAMMA) & mask
        z = ((state ^ (state >> 30)) * c1) & mask
        z = ((z ^ (z >> 27)) * c2) & mask
        r = ((z ^ (z >> 31)) * (i + 1)) >> 64
        perm[i], perm[r] = perm[r], perm[i]
    return perm


def _pack(values: list[int]) -> int:
    """values (each below 2^64) as the lanes of one int, the first in the lowest bits."""
    buf = bytearray(16 * len(values))
    words = array.array("Q", values)
    if sys.byteorder == "big":
        words.byteswap()
    memoryview(buf).cast("Q")[0::2] = words
    return int.from_bytes(buf, "little")


class _Piece:
    """The constants of the lanes of steps i0 .. i0 + n - 1 (lane k: step i0 + k)."""

    __slots__ = ("i0", "last", "gammas", "units", "neg_units", "widths", "mask", "bits64")

    def __init__(self, lot_size: int, i0: int, n: int, ones: dict[int, int]) -> None:
        steps = range(i0, i0 + n)
        self.i0 = i0
        self.last = i0 + n - 1
        # the state of step i's draw less the seed: GAMMA * (L - i)
        self.gammas = _pack([(GAMMA * (lot_size - i)) & MASK64 for i in steps])
        # The window of step i for a value x: the z (the draw's mix before its last xorshift, which
        # changes it by less than 2^33) that could give r_i = x, i.e. m in [lo, hi) = [ceil(x 2^64 / K),
        # ceil((x + 1) 2^64 / K)), K = i + 1, less 2^33 and plus 2^33.  With u = floor(2^64 / (K 2^FINE))
        # (>= 2^36: K <= 2^16) it starts at (x 2^FINE - 1) u, in (x 2^64 / K - x 2^FINE - u, lo - u], and
        # is ceil(2^64 / K) + u + 2^34 wide: past hi + 2^33, as x 2^FINE < 2^28.  (Lanes before the first
        # step are unused.)
        units = [TWO64 // ((i + 1) << FINE) for i in steps]
        self.units = _pack(units)
        self.neg_units = _pack([TWO64 - u for u in units])
        # 2^64 less the window's width
        self.widths = _pack([TWO64 - (-(-TWO64 // (i + 1)) + u + (1 << 34)) for i, u in zip(steps, units)])
        if n not in ones:
            ones[n] = _pack([1] * n)
        self.bits64 = ones[n] << 64
        self.mask = self.bits64 - ones[n]


class Lanes:
    """The packed steps lowest + 1 .. lot_size - 1 of a lot of lot_size tasks, in pieces of PIECE lanes."""

    __slots__ = ("lot_size", "lowest", "pieces", "ones")

    def __init__(self, lot_size: int, lowest: int) -> None:
        self.lot_size = lot_size
        self.lowest = lowest
        ones: dict[int, int] = {}
        self.pieces = [_Piece(lot_size, i0, min(PIECE, lot_size - i0), ones)
                       for i0 in range(lowest + 1, lot_size, PIECE)]
        self.ones = ones[min(PIECE, lot_size - lowest - 1)] if self.pieces else 0

    def rows(self, seed: int, rows: list[int]) -> list[int]:
        """The tasks at rows (each >= self.lowest) of the shuffle that starts from seed."""
        L = self.lot_size
        chains = [[draw(seed, L, q) if q else 0, q] for q in rows]   # [x, b]: the row's value so far
        if not self.pieces:
            return [c[0] for c in chains]
        broadcast = seed * self.ones           # the seed in every lane
        c1, c2, lane = C1, C2, LANE
        for piece in self.pieces:
            active = [c for c in chains if c[1] < piece.last]
            if not active:
                continue
            mask = piece.mask
            # the draws' SplitMix64 mix, every lane at once; the last multiplication is left unmasked
            # (its lanes are below C2 * 2^64, so adding below 2^92 to them stays in them)
            z = (piece.gammas + broadcast) & mask
            z = ((z ^ ((z >> 30) & mask)) * c1) & mask
            z = (z ^ ((z >> 27) & mask)) * c2
            bits64 = piece.bits64
            for c in active:
                while True:
                    x, b = c
                    # the lanes whose z lies in x's window: the low 64 bits of a = z - start (mod 2^64),
                    # then bit 64 of a ^ (a + 2^64 - width) is the carry of a + 2^64 - width, set when
                    # a >= width (outside)
                    if x:
                        a = z + ((x << FINE) - 1) * piece.neg_units
                    else:
                        a = z + piece.units
                    outside = ((a + piece.widths) ^ a) & bits64
                    if outside == bits64:
                        break
                    candidates = outside ^ bits64
                    i0 = piece.i0
                    if b >= i0:                   # only steps after b
                        candidates >>= lane * (b + 1 - i0)
                        i0 = b + 1
                    found = -1
                    while candidates:
                        low = candidates & -candidates
                        i = i0 + (low.bit_length() - 65) // lane
                        if draw(seed, L, i) == x:
                            found = i
                            break
                        candidates ^= low
                    if found < 0:
                        break
                    c[0] = c[1] = found
        return [c[0] for c in chains]


class Draws:
    """The steps lowest + 1 .. lot_size - 1 of a lot of lot_size tasks (at most 65,536), as NumPy arrays: what
    the lanes do, with every step's draw computed exactly, at once."""

    __slots__ = ("lot_size", "lowest", "gammas", "multipliers", "z", "t")

    def __init__(self, lot_size: int, lowest: int) -> None:
        self.lot_size = lot_size
        self.lowest = lowest
        u64 = numpy.uint64
        steps = numpy.arange(lowest + 1, lot_size, dtype=u64)
        # step i's state less the seed, GAMMA * (L - i) (wrapping), and its draw's multiplier i + 1
        self.gammas = u64(GAMMA) * (u64(lot_size) - steps)
        self.multipliers = steps + u64(1)
        self.z = numpy.empty_like(steps)
        self.t = numpy.empty_like(steps)

    def rows(self, seed: int, rows: list[int]) -> list[int]:
        """The tasks at rows (each >= self.lowest) of the shuffle that starts from seed."""
        u64 = numpy.uint64
        z, t, k = self.z, self.t, self.multipliers
        # r_i = high64(mix(seed + GAMMA (L - i)) * (i + 1)), every step at once (the arrays wrap modulo 2^64)
        numpy.add(self.gammas, u64(seed), out=z)
        numpy.right_shift(z, u64(30), out=t)
        numpy.bitwise_xor(z, t, out=z)
        numpy.multiply(z, u64(C1), out=z)
        numpy.right_shift(z, u64(27), out=t)
        numpy.bitwise_xor(z, t, out=z)
        numpy.multiply(z, u64(C2), out=z)
        numpy.right_shift(z, u64(31), out=t)
        numpy.bitwise_xor(z, t, out=z)
        # (m = 2^32 mh + ml, k < 2^32: high64(m k) = (mh k + (ml k >> 32)) >> 32, no term above 2^64)
        numpy.bitwise_and(z, u64(0xFFFFFFFF), out=t)
        numpy.multiply(t, k, out=t)
        numpy.right_shift(t, u64(32), out=t)
        numpy.right_shift(z, u64(32), out=z)
        numpy.multiply(z, k, out=z)
        numpy.add(z, t, out=z)
        numpy.right_shift(z, u64(32), out=z)
        draws = z
        first = self.lowest + 1
        tasks = []
        for q in rows:
            # the row's chain: x = r_q, then the first step after b that drew x, as long as there is one
            x, b = (draw(seed, self.lot_size, q) if q else 0), q
            while True:
                later = numpy.flatnonzero(draws[b + 1 - first:] == x)
                if later.size == 0:
                    break
                x = b = b + 1 + int(later[0])
            tasks.append(x)
        return tasks


# Rough costs in ns, measured with CPython 3.11 on x86-64, for the choice below: a step walked in Python
# and a row of its list; a lane's mix, a lane's comparison with a row's value (once a row, and once a piece
# for each step of its chain, about ln(L / row) of them), a lane's constants (once a call); a lot's and a
# piece's Python work.
_WALK_STEP = 400
_WALK_ROW = 13
_LANE_MIX = 40
_LANE_ROW = 13
_LANE_SETUP = 550
_LOT_FIXED = 5000
_PIECE_FIXED = 2000


def plan(lot_size: int, rows: list[int], lots: int) -> Lanes | Draws | None:
    """The lanes (or with NumPy, the draws) to read rows of lots shuffles by, or None when the plain walk
    should be quicker."""
    if not rows or lot_size < 32:
        return None
    lowest = min(rows)
    steps = lot_size - max(lowest, 1)
    lanes = lot_size - 1 - lowest
    pieces = -(-lanes // PIECE)
    hops = sum(math.log(lot_size / max(q, 1)) for q in rows) + len(rows)
    walk = lots * (steps * _WALK_STEP + lot_size * _WALK_ROW)
    packed = (lanes * _LANE_SETUP
              + lots * (lanes * (_LANE_MIX + _LANE_ROW * len(rows)) + pieces * _PIECE_FIXED
                        + hops * min(lanes, PIECE) * _LANE_ROW + _LOT_FIXED))
    if packed >= walk:
        return None
    return Lanes(lot_size, lowest) if numpy is None else Draws(lot_size, lowest)


def lot_rows(lanes: Lanes | Draws | None, seed: int, lot_size: int, rows: list[int], lowest_row: int) -> list[int]:
    """The tasks at rows (each >= lowest_row) of the shuffle that starts from seed."""
    if lanes is not None:
        return lanes.rows(seed, rows)
    perm = shuffle_walk(seed, lot_size, lowest_row)
    return [perm[q] for q in rows]
