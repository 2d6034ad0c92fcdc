#!/usr/bin/env python3
# test/tools/ring_fingerprint.py
# Independent implementation of the ring encoding (src/core/ring.h layout)
# and ring_hash64, for the golden fingerprint (format 1) and digest (format
# 2) in test/test_ring.c.
import struct
M = (1 << 64) - 1
def rotl(x, r): return ((x << r) | (x >> (64 - r))) & M
def fmix(h):
    h ^= h >> 33; h = (h * 0xff51afd7ed558ccd) & M
    h ^= h >> 33; h = (h * 0xc4ceb9fe1a85ec53) & M
    h ^= h >> 33; return h
def h64(data, seed):
    k1, k2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
    h1 = seed ^ 0x9e3779b97f4a7c15; h2 = seed ^ 0x6a09e667f3bcc909
    n = len(data); i = 0
    while i + 16 <= n:
        a, b = struct.unpack_from('<QQ', data, i)
        h1 = (rotl(h1 ^ ((a * k1) & M), 31) * k2) & M
        h2 = (rotl(h2 ^ ((b * k2) & M), 33) * k1) & M
        i += 16
    tail = data[i:] + bytes(16 - (n - i))
    a, b = struct.unpack_from('<QQ', tail, 0)
    h1 = (rotl(h1 ^ ((a * k1) & M), 31) * k2) & M
    h2 = (rotl(h2 ^ ((b * k2) & M), 33) * k1) & M
    h1 ^= n
    h1 = (h1 + h2) & M; h2 = (h2 + h1) & M
    return fmix(h1) ^ fmix((h2 + 0x2545f4914f6cdd1d) & M)
if __name__ == '__main__':
    import hashlib
    # the ring of json_exact_small_ring: p=1, R=2, seed 5, nodes (1, zone 0, 1.0), (2, zone 1, 1.5)
    # assignment [[1,2],[2,1]] -> indexes [[0,1],[1,0]]
    body = struct.pack('<IIIIq', 1, 2, 2, 0, 5)
    body += struct.pack('<iiiId', 1, 0, 0, 0, 1.0) + struct.pack('<iiiId', 2, 1, 0, 0, 1.5)
    body += struct.pack('<HHHH', 0, 1, 1, 0)
    # format 1: the fingerprint and the size; format 2: SHA-256 of the same
    # fields (bytes 40..end), 24 bytes more
    print(hex(h64(body, 1)), len(body) + 16)
    print(hashlib.sha256(body).hexdigest(), len(body) + 40)
