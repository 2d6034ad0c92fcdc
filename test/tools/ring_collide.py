#!/usr/bin/env python3
# test/tools/ring_collide.py
#	Makes two different valid partition rings whose format 1 encodings (what
#	1.0 stored) have the same size and the same 64-bit fingerprint: the
#	attack on 1.0's lookup cache, which found a decoded ring by that
#	fingerprint and size.  Ring B is ring A with the two replicas of one
#	partition swapped and its seed solved for, which takes microseconds
#	because every step of ring_hash64 can be inverted.
#
#	Prints both rings as JSON text and as format 1 bytes (hex), with the
#	common fingerprint and the SHA-256 of each format 2 encoding; the tests
#	(sql/ring_cache.sql, test/test_ring.c) hold the output.  Run:
#	    python3 test/tools/ring_collide.py
import hashlib
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ring_fingerprint import h64, rotl, M  # noqa: E402

K1, K2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
K1INV, K2INV = pow(K1, -1, 1 << 64), pow(K2, -1, 1 << 64)


def rotr(x, r):
    return rotl(x, 64 - r)


def body_v1(part_power, replicas, seed, nodes, rows):
    """Bytes 16..end of the format 1 value (what the fingerprint covers)."""
    index = {n[0]: i for i, n in enumerate(nodes)}
    b = struct.pack('<IIIIq', part_power, replicas, len(nodes), 0, seed)
    for (nid, zone, region, weight) in nodes:
        b += struct.pack('<iiiId', nid, zone, region, 0, weight)
    for row in rows:
        b += struct.pack('<%dH' % len(row), *[index[v] for v in row])
    return b


def value_v1(part_power, replicas, seed, nodes, rows):
    body = body_v1(part_power, replicas, seed, nodes, rows)
    return b'PRNG' + struct.pack('<IQ', 1, h64(body, 1)) + body


def value_v2(part_power, replicas, seed, nodes, rows):
    body = body_v1(part_power, replicas, seed, nodes, rows)
    return b'PRNG' + struct.pack('<I', 2) + hashlib.sha256(body).digest() + body


def lane_words(body, lane):
    """The 64-bit words lane 0 (h1) or 1 (h2) takes, tail block included."""
    n = len(body)
    words = []
    i = 0
    while i + 16 <= n:
        words.append(struct.unpack_from('<Q', body, i + 8 * lane)[0])
        i += 16
    tail = body[i:] + bytes(16 - (n - i))
    words.append(struct.unpack_from('<Q', tail, 8 * lane)[0])
    return words


def h1_after(body, seed_in=1):
    h = seed_in ^ 0x9e3779b97f4a7c15
    states = [h]
    for w in lane_words(body, 0):
        h = (rotl(h ^ ((w * K1) & M), 31) * K2) & M
        states.append(h)
    return states


def to_json(part_power, replicas, seed, nodes, rows):
    return json.dumps({
        'part_power': part_power, 'replicas': replicas, 'seed': seed,
        'nodes': [{'id': n[0], 'zone': n[1], 'region': n[2], 'weight': n[3]} for n in nodes],
        'assignment': rows}, separators=(', ', ': '))


def main():
    # Ring A: 2^3 partitions, 2 replicas, 4 nodes in 2 zones.
    p, R, seed_a = 3, 2, 5
    nodes = [(1, 1, 0, 1.0), (2, 1, 0, 1.0), (3, 2, 0, 1.0), (4, 2, 0, 1.0)]
    rows_a = [[1, 3, 2, 4, 1, 3, 2, 4], [3, 1, 4, 2, 4, 2, 3, 1]]
    # Swap the replicas of a partition whose slots lie in lane h1 (offset
    # mod 16 below 8 in the fingerprinted bytes): here partition 4.
    x = 4
    assert (24 + 24 * len(nodes) + 2 * x) % 16 < 8 and (2 << p) % 16 == 0
    rows_b = [row[:] for row in rows_a]
    rows_b[0][x], rows_b[1][x] = rows_a[1][x], rows_a[0][x]

    body_a = body_v1(p, R, seed_a, nodes, rows_a)
    target = h1_after(body_a)[-1]
    # Walk ring B's lane h1 back from A's final state to the state after
    # block 1 (the block whose first word is the seed), then solve the seed.
    words_b = lane_words(body_v1(p, R, 0, nodes, rows_b), 0)
    h = target
    for w in reversed(words_b[2:]):
        h = rotr((h * K2INV) & M, 31) ^ ((w * K1) & M)
    state0 = h1_after(body_a)[1]		# after block 0: part_power, replicas, n
    seed_word = ((rotr((h * K2INV) & M, 31) ^ state0) * K1INV) & M
    seed_b = seed_word - (1 << 64) if seed_word >= 1 << 63 else seed_word

    va = value_v1(p, R, seed_a, nodes, rows_a)
    vb = value_v1(p, R, seed_b, nodes, rows_b)
    assert va != vb and len(va) == len(vb) and va[8:16] == vb[8:16], "no collision"
    for rows in (rows_a, rows_b):
        for part in range(1 << p):
            assert rows[0][part] != rows[1][part]
    print('fingerprint %016x, %d bytes each' % (struct.unpack_from('<Q', va, 8)[0], len(va)))
    for name, seed, rows, v1 in (('A', seed_a, rows_a, va), ('B', seed_b, rows_b, vb)):
        print('ring %s: seed %d' % (name, seed))
        print('  json: %s' % to_json(p, R, seed, nodes, rows))
        print('  format 1: \\x%s' % v1.hex())
        print('  format 2 sha256: %s' % value_v2(p, R, seed, nodes, rows)[8:40].hex())


if __name__ == '__main__':
    main()
