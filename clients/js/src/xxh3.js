// XXH3-64 with seed 0 and the default secret, as xxHash 0.8 computes it (the
// extension's xxh3_64): a port of the reference's scalar code paths, in
// BigInt arithmetic modulo 2^64.  Synchronous and dependency-free, so that the
// package loads by import and by require() alike.

const M64 = (1n << 64n) - 1n;
const PRIME32_1 = 0x9e3779b1n;
const PRIME32_2 = 0x85ebca77n;
const PRIME32_3 = 0xc2b2ae3dn;
const PRIME64_1 = 0x9e3779b185ebca87n;
const PRIME64_2 = 0xc2b2ae3d27d4eb4fn;
const PRIME64_3 = 0x165667b19e3779f9n;
const PRIME64_4 = 0x85ebca77c2b2ae63n;
const PRIME64_5 = 0x27d4eb2f165667c5n;
const PRIME_MX1 = 0x165667919e3779f9n;
const PRIME_MX2 = 0x9fb21c651e98df25n;

const SECRET = new DataView(Uint8Array.from([
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
  0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
  0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
  0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
  0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
  0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
  0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
  0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
  0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
  0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
  0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
  0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
]).buffer);
const SECRET_SIZE = 192;

const s64 = (i) => SECRET.getBigUint64(i, true);
const s32 = (i) => SECRET.getUint32(i, true);

function mulFold64(a, b) {
  const product = a * b;
  return (product >> 64n) ^ (product & M64);
}

function xxh64Avalanche(h) {
  h ^= h >> 33n;
  h = (h * PRIME64_2) & M64;
  h ^= h >> 29n;
  h = (h * PRIME64_3) & M64;
  return h ^ (h >> 32n);
}

function xxh3Avalanche(h) {
  h ^= h >> 37n;
  h = (h * PRIME_MX1) & M64;
  return h ^ (h >> 32n);
}

const rotl64 = (h, r) => ((h << BigInt(r)) | (h >> BigInt(64 - r))) & M64;

function rrmxmx(h, len) {
  h ^= rotl64(h, 49) ^ rotl64(h, 24);
  h = (h * PRIME_MX2) & M64;
  h ^= ((h >> 35n) + len) & M64;
  h = (h * PRIME_MX2) & M64;
  return h ^ (h >> 28n);
}

const swapView = new DataView(new ArrayBuffer(8));

function byteSwap64(v) {
  swapView.setBigUint64(0, v, true);
  return swapView.getBigUint64(0, false);
}

function mix16(data, i, secret) {
  return mulFold64(data.getBigUint64(i, true) ^ s64(secret), data.getBigUint64(i + 8, true) ^ s64(secret + 8));
}

const STRIPE = 64;
const STRIPES_PER_BLOCK = (SECRET_SIZE - STRIPE) / 8;
const BLOCK = STRIPE * STRIPES_PER_BLOCK;

function accumulate512(acc, data, i, secret) {
  for (let j = 0; j < 8; j++) {
    const v = data.getBigUint64(i + 8 * j, true);
    const k = v ^ s64(secret + 8 * j);
    acc[j ^ 1] = (acc[j ^ 1] + v) & M64;
    acc[j] = (acc[j] + (k & 0xffffffffn) * (k >> 32n)) & M64;
  }
}

function scramble(acc) {
  for (let j = 0; j < 8; j++) {
    let a = acc[j];
    a ^= a >> 47n;
    a ^= s64(SECRET_SIZE - STRIPE + 8 * j);
    acc[j] = (a * PRIME32_1) & M64;
  }
}

function xxh3Long(data, n) {
  const acc = [PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1];
  const blocks = Math.floor((n - 1) / BLOCK);
  for (let b = 0; b < blocks; b++) {
    for (let st = 0; st < STRIPES_PER_BLOCK; st++) accumulate512(acc, data, b * BLOCK + st * STRIPE, st * 8);
    scramble(acc);
  }
  const stripes = Math.floor((n - 1 - BLOCK * blocks) / STRIPE);
  for (let st = 0; st < stripes; st++) accumulate512(acc, data, blocks * BLOCK + st * STRIPE, st * 8);
  accumulate512(acc, data, n - STRIPE, SECRET_SIZE - STRIPE - 7);
  let result = (BigInt(n) * PRIME64_1) & M64;
  for (let j = 0; j < 4; j++) {
    result += mulFold64(acc[2 * j] ^ s64(11 + 16 * j), acc[2 * j + 1] ^ s64(11 + 16 * j + 8));
  }
  return xxh3Avalanche(result & M64);
}

/** Unsigned XXH3-64 (seed 0) of a Uint8Array, as a BigInt in [0, 2^64). */
export function xxh3(bytes) {
  const n = bytes.length;
  const data = new DataView(bytes.buffer, bytes.byteOffset, n);
  const len = BigInt(n);
  if (n === 0) return xxh64Avalanche(s64(56) ^ s64(64));
  if (n <= 3) {
    const c = ((bytes[0] << 16) | (bytes[n >> 1] << 24) | bytes[n - 1] | (n << 8)) >>> 0;
    return xxh64Avalanche(BigInt(c) ^ BigInt((s32(0) ^ s32(4)) >>> 0));
  }
  if (n <= 8) {
    const in64 = BigInt(data.getUint32(n - 4, true)) + (BigInt(data.getUint32(0, true)) << 32n);
    return rrmxmx(in64 ^ (s64(8) ^ s64(16)), len);
  }
  if (n <= 16) {
    const lo = data.getBigUint64(0, true) ^ (s64(24) ^ s64(32));
    const hi = data.getBigUint64(n - 8, true) ^ (s64(40) ^ s64(48));
    return xxh3Avalanche((len + byteSwap64(lo) + hi + mulFold64(lo, hi)) & M64);
  }
  let acc = len * PRIME64_1;
  if (n <= 128) {
    if (n > 32) {
      if (n > 64) {
        if (n > 96) acc += mix16(data, 48, 96) + mix16(data, n - 64, 112);
        acc += mix16(data, 32, 64) + mix16(data, n - 48, 80);
      }
      acc += mix16(data, 16, 32) + mix16(data, n - 32, 48);
    }
    acc += mix16(data, 0, 0) + mix16(data, n - 16, 16);
    return xxh3Avalanche(acc & M64);
  }
  if (n <= 240) {
    for (let i = 0; i < 8; i++) acc += mix16(data, 16 * i, 16 * i);
    acc = xxh3Avalanche(acc & M64);
    const rounds = Math.floor(n / 16);
    for (let i = 8; i < rounds; i++) acc += mix16(data, 16 * i, 16 * (i - 8) + 3);
    acc += mix16(data, n - 16, 136 - 17);
    return xxh3Avalanche(acc & M64);
  }
  return xxh3Long(data, n);
}
