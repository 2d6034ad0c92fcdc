// XXH3-64 with seed 0 and the default secret, as xxHash 0.8 computes it (the
// extension's xxh3_64): a port of the reference's scalar code paths, in
// BigInt arithmetic modulo 2^64, but for the stripes of keys of more than 240
// bytes, which run in WebAssembly (its i64 arithmetic; BigInt allocates at
// each operation: 38 ms a MiB).  Synchronous and dependency-free, so that the
// package loads by import and by require() alike.

import { OP, I32, I64, memarg64, get, set, tee, i32, i64, instantiate } from './wasm.js';

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

// The stripes in WebAssembly.  Its memory: the secret (192 bytes), then the 8 accumulators (64), then the bytes
// of up to CHUNK_BLOCKS blocks of the key at a time.
const ACC = SECRET_SIZE;
const DATA = ACC + 64;
const CHUNK_BLOCKS = 1024;

// stripes(ptr, count, secret): accumulates the stripes at ptr, ptr + 64, ... (count of them), stripe s with the
// secret from byte secret + 8 s; scramble(): the accumulators scrambled (the end of a block).
const [PTR, COUNT, SEC, S, Q, SQ] = [0, 1, 2, 3, 4, 5];
const [V, K] = [6, 7];
const STRIPES = [
  ...i32(0), ...set(S),
  OP.block, OP.void, OP.loop, OP.void,
  ...get(S), ...get(COUNT), OP.i32_ge_u, OP.br_if, 1,
  ...get(PTR), ...get(S), ...i32(6), OP.i32_shl, OP.i32_add, ...set(Q),
  ...get(SEC), ...get(S), ...i32(3), OP.i32_shl, OP.i32_add, ...set(SQ),
  ...[0, 1, 2, 3, 4, 5, 6, 7].flatMap((j) => [
    // v = the lane's 8 bytes, k = v ^ the secret's
    ...get(Q), OP.i64_load, ...memarg64(8 * j), ...tee(V),
    ...get(SQ), OP.i64_load, ...memarg64(8 * j), OP.i64_xor, ...set(K),
    // acc[j ^ 1] += v
    ...i32(0), ...i32(0), OP.i64_load, ...memarg64(ACC + 8 * (j ^ 1)), ...get(V), OP.i64_add,
    OP.i64_store, ...memarg64(ACC + 8 * (j ^ 1)),
    // acc[j] += (k & 0xffffffff) * (k >> 32)
    ...i32(0), ...i32(0), OP.i64_load, ...memarg64(ACC + 8 * j),
    ...get(K), ...i64(0xffffffff), OP.i64_and, ...get(K), ...i64(32), OP.i64_shr_u, OP.i64_mul, OP.i64_add,
    OP.i64_store, ...memarg64(ACC + 8 * j),
  ]),
  ...get(S), ...i32(1), OP.i32_add, ...set(S),
  OP.br, 0, OP.end, OP.end,
];
const A = 0;
const SCRAMBLE = [0, 1, 2, 3, 4, 5, 6, 7].flatMap((j) => [
  // acc[j] = (acc[j] ^ acc[j] >> 47 ^ the secret's last 64 bytes' lane j) * PRIME32_1
  ...i32(0),
  ...i32(0), OP.i64_load, ...memarg64(ACC + 8 * j), ...tee(A), ...get(A), ...i64(47), OP.i64_shr_u, OP.i64_xor,
  ...i32(0), OP.i64_load, ...memarg64(SECRET_SIZE - STRIPE + 8 * j), OP.i64_xor,
  ...i64(PRIME32_1), OP.i64_mul,
  OP.i64_store, ...memarg64(ACC + 8 * j),
]);

let wasm = null;

function xxh3Long(bytes, n) {
  if (wasm === null) {
    wasm = instantiate([
      { name: 'stripes', params: [I32, I32, I32], locals: [[3, I32], [2, I64]], code: STRIPES },
      { name: 'scramble', params: [], locals: [[1, I64]], code: SCRAMBLE },
    ], Math.ceil((DATA + CHUNK_BLOCKS * BLOCK) / 65536));
    new Uint8Array(wasm.exports.memory.buffer).set(new Uint8Array(SECRET.buffer), 0);
  }
  const { stripes, scramble, memory } = wasm.exports;
  const heap = new Uint8Array(memory.buffer);
  const view = new DataView(memory.buffer);
  [PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1]
    .forEach((v, j) => view.setBigUint64(ACC + 8 * j, v, true));
  const blocks = Math.floor((n - 1) / BLOCK);
  for (let b0 = 0; b0 < blocks; b0 += CHUNK_BLOCKS) {
    const b1 = Math.min(blocks, b0 + CHUNK_BLOCKS);
    heap.set(bytes.subarray(b0 * BLOCK, b1 * BLOCK), DATA);
    for (let b = 0; b < b1 - b0; b++) {
      stripes(DATA + b * BLOCK, STRIPES_PER_BLOCK, 0);
      scramble();
    }
  }
  heap.set(bytes.subarray(blocks * BLOCK, n), DATA);
  stripes(DATA, Math.floor((n - 1 - BLOCK * blocks) / STRIPE), 0);
  heap.set(bytes.subarray(n - STRIPE, n), DATA);
  stripes(DATA, 1, SECRET_SIZE - STRIPE - 7);
  let result = (BigInt(n) * PRIME64_1) & M64;
  for (let j = 0; j < 4; j++) {
    const lo = view.getBigUint64(ACC + 16 * j, true);
    const hi = view.getBigUint64(ACC + 16 * j + 8, true);
    result += mulFold64(lo ^ s64(11 + 16 * j), hi ^ s64(11 + 16 * j + 8));
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
  return xxh3Long(bytes, n);
}
