#!/usr/bin/env python3
# test/data/subsets_golden.py
#	An independent transcription, in Python, of the constructions that the
#	README documents for rocksteadier_subset, random_subset,
#	deterministic_subset and consistent_subset.  It prints the golden values
#	that test/test_subsets.c and sql/rocksteadier.sql / sql/subset_baselines.sql
#	pin, so that they do not come from the extension's own output.  It lists
#	everything (every lot, the whole shuffle, every position): O(N).
#	Not run by the test suites; run it by hand: python3 test/data/subsets_golden.py
M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def draw(state):
    """SplitMix64: the next state and its output."""
    state = (state + GAMMA) & M64
    return state, mix(state)


def ring_order(n):
    """Ringsteady's ring order of n: the bit-reversal permutation without indexes >= n."""
    w = 0
    while (1 << w) < n:
        w += 1
    out = []
    for p in range(1 << w):
        i = int(format(p, '0%db' % w)[::-1], 2) if w else 0
        if i < n:
            out.append(i)
    return out


def scaled_start(m, n):
    """ceil(reverse_bits64(m) * n / 2^64) mod n"""
    r = int(format(m, '064b')[::-1], 2) * n
    return ((r >> 64) + ((r & M64) != 0)) % n


def lot_shuffle(f, j, lot_size):
    state = mix((f << 32) | j)
    perm = list(range(lot_size))
    for i in range(lot_size - 1, 0, -1):
        state, d = draw(state)
        r = (d * (i + 1)) >> 64
        perm[i], perm[r] = perm[r], perm[i]
    return perm


def rocksteadier(m, n, k, lot_size=10):
    lots = (n + lot_size - 1) // lot_size
    f = m // lot_size
    order = ring_order(lots)
    start = scaled_start(f, lots)
    first_row = ring_order(lot_size)[m % lot_size]
    table = [lot_shuffle(f, j, lot_size) for j in range(lots)]
    out = []
    for p in range(lot_size):
        for t in range(lots):
            if len(out) >= k:
                return out
            lot = order[(start + t) % lots]
            task = lot * lot_size + table[lot][(first_row + p) % lot_size]
            if task < n:
                out.append(task)
    return out


def stream(seed, algorithm, index):
    return mix((mix((seed & M64) ^ algorithm) + index) & M64)


def forward_shuffle(a, state):
    n = len(a)
    for i in range(n - 1):
        state, d = draw(state)
        j = i + ((d * (n - i)) >> 64)
        a[i], a[j] = a[j], a[i]
    return a


def random_subset(m, n, k, seed=0):
    return forward_shuffle(list(range(n)), stream(seed, 1, m))[:min(k, n)]


def deterministic_subset(m, n, k, seed=0):
    k = min(k, n)
    per_round = n // k
    r = m // per_round
    leftovers = n % k
    left_out = {(r * leftovers + i) % n for i in range(leftovers)}
    shuffled = forward_shuffle([b for b in range(n) if b not in left_out], stream(seed, 2, r))
    start = (m % per_round) * k
    return shuffled[start:start + k]


def consistent_subset(m, n, k, seed=0):
    origin = draw(stream(seed, 3, 2 * m + 1))[1]
    points = sorted(((draw(stream(seed, 3, 2 * b))[1] - origin) & M64, b) for b in range(n))
    return [b for _, b in points[:min(k, n)]]


if __name__ == '__main__':
    for m in (10, 11, 12):
        print('rocksteadier_subset(%d, 55, 10) =' % m, rocksteadier(m, 55, 10))
    print('rocksteadier_subset(5, 23, 100, 4) =', rocksteadier(5, 23, 100, 4))
    print('random_subset(3, 100, 8) =', random_subset(3, 100, 8))
    print('random_subset(3, 100, 8, -7) =', random_subset(3, 100, 8, -7))
    for m in range(4):
        print('deterministic_subset(%d, 10, 4) =' % m, deterministic_subset(m, 10, 4))
    print('deterministic_subset(7, 100, 8, -7) =', deterministic_subset(7, 100, 8, -7))
    print('consistent_subset(3, 100, 8) =', consistent_subset(3, 100, 8))
    print('consistent_subset(3, 100, 8, -7) =', consistent_subset(3, 100, 8, -7))
