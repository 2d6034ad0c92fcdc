// Keys, XXH3-64, SplitMix64, JumpBackHash and JumpHash: the extension's
// src/core/jump.c, src/core/splitmix64.h and src/key_hash.c, ported.
import { xxh3 } from './xxh3.js';

export const MASK64 = (1n << 64n) - 1n;
const GAMMA = 0x9e3779b97f4a7c15n;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -(1n << 63n);

const encoder = new TextEncoder();

/**
 * A RangeError or TypeError whose message names the bad value.  A RangeError
 * carries `sqlstate`, the SQLSTATE the extension raises for the same argument:
 * '22023' (invalid parameter value) or, kind 'limit', '54000' (program limit
 * exceeded).
 */
export function argError(kind, message) {
  if (kind === 'type') return new TypeError(message);
  const e = new RangeError(message);
  e.sqlstate = kind === 'limit' ? '54000' : '22023';
  return e;
}

/** Checks that value is an integer Number in [min, max] (SQL int4 by default). */
export function checkInt(name, value, min = INT32_MIN, max = INT32_MAX) {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw argError('type', `${name} must be an integer, got ${describe(value)}`);
  }
  if (value < min || value > max) {
    throw argError('range', `${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

export function describe(value) {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '...' : value);
  if (value instanceof Uint8Array) return `Uint8Array(${value.length})`;
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'number') return String(value);
  return /^[aeiou]/.test(typeof value) ? `an ${typeof value}` : `a ${typeof value}`;
}

/**
 * The unsigned 64-bit form of an integer key: a BigInt in [-2^63, 2^64) (a
 * signed bigint as SQL has it, or its unsigned value) or a safe-integer Number.
 */
export function key64(name, key) {
  if (typeof key === 'number') {
    if (!Number.isSafeInteger(key)) {
      throw argError('range', `${name} must be a safe integer Number or a BigInt, got ${key} (pass 64-bit keys as BigInt)`);
    }
    key = BigInt(key);
  } else if (typeof key !== 'bigint') {
    throw argError('type', `${name} must be a BigInt, an integer Number, a string or a Uint8Array, got ${describe(key)}`);
  }
  if (key < INT64_MIN || key > MASK64) {
    throw argError('range', `${name} must be a 64-bit integer (between -2^63 and 2^64 - 1), got ${key}`);
  }
  return key & MASK64;
}

/** The bytes of a text or bytes key: a string as UTF-8, a Uint8Array as it is. */
export function keyBytes(name, key) {
  if (typeof key === 'string') {
    if (!key.isWellFormed()) {
      throw argError('range', `${name} is not well-formed Unicode (a lone surrogate), got ${describe(key)}`);
    }
    return encoder.encode(key);
  }
  if (key instanceof Uint8Array) return key;
  if (ArrayBuffer.isView(key)) return new Uint8Array(key.buffer, key.byteOffset, key.byteLength);
  throw argError('type', `${name} must be a string or a Uint8Array, got ${describe(key)}`);
}

/** Unsigned XXH3-64 (seed 0) of bytes, as a BigInt in [0, 2^64). */
export const xxh3Unsigned = xxh3;

/**
 * xxh3_64(key): XXH3-64 (seed 0) of a string's UTF-8 bytes or of a Uint8Array,
 * as the extension returns it: a signed 64-bit BigInt.  An integer key (a
 * BigInt, or a safe-integer Number) is hashed as its 8 little-endian bytes, as
 * the extension's xxh3_64(bigint) and hash4j's hashLongToLong: hash integer ids
 * with it before a ring lookup, which takes an integer key's top bits as they are.
 */
export function xxh3_64(key) {
  if (typeof key === 'bigint' || typeof key === 'number') {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigUint64(0, key64('key', key), true);
    return BigInt.asIntN(64, xxh3Unsigned(bytes));
  }
  return BigInt.asIntN(64, xxh3Unsigned(keyBytes('key', key)));
}

/** The 64-bit key of any key: integer keys as they are, others by XXH3-64. */
export function anyKey(name, key) {
  if (typeof key === 'string' || ArrayBuffer.isView(key)) return xxh3Unsigned(keyBytes(name, key));
  return key64(name, key);
}

export function splitmix64Mix(z) {
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return z ^ (z >> 31n);
}

/** SplitMix64 (Java's SplittableRandom, hash4j's splitMix64_V1). */
export class SplitMix64 {
  constructor(seed) {
    this.state = seed & MASK64;
  }

  next() {
    this.state = (this.state + GAMMA) & MASK64;
    return splitmix64Mix(this.state);
  }
}

function parity32(x) {
  x ^= x >>> 16;
  x ^= x >>> 8;
  x ^= x >>> 4;
  x ^= x >>> 2;
  x ^= x >>> 1;
  return x & 1;
}

/** JumpBackHash drawing from rng (hash4j's Algorithm 6); buckets >= 1. */
export function jumpBackDrawing(rng, n) {
  if (n === 1) return 0;
  const v = rng.next();
  const lo = Number(v & 0xffffffffn);
  const hi = Number(v >> 32n);
  let u = ((lo ^ hi) & (0xffffffff >>> Math.clz32(n - 1))) >>> 0;
  while (u !== 0) {
    const q = 2 ** (31 - Math.clz32(u)); // u < 2^31: q <= 2^30
    let b = q + ((parity32(u) ? hi : lo) & (q - 1));
    for (;;) {
      if (b < n) return b;
      const w = rng.next();
      const mask = q * 2 - 1;
      b = Number(w & 0xffffffffn) & mask;
      if (b < q) break;
      if (b < n) return b;
      b = Number(w >> 32n) & mask;
      if (b < q) break;
    }
    u ^= q;
  }
  return 0;
}

export function checkBuckets(buckets) {
  checkInt('buckets', buckets, -Infinity, Infinity);
  if (buckets < 1) throw argError('range', `number of buckets must be at least 1, got ${buckets}`);
  if (buckets > INT32_MAX) throw argError('range', `number of buckets must be at most ${INT32_MAX}, got ${buckets}`);
}

function jumpBack(key, buckets) {
  return jumpBackDrawing(new SplitMix64(key), buckets);
}

function jumpConsistent(key, buckets) {
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    key = (key * 2862933555777941757n + 1n) & MASK64;
    j = Math.floor((b + 1) * (2147483648 / (Number(key >> 33n) + 1)));
  }
  return b;
}

/**
 * jumpbackhash(key, buckets): the bucket in [0, buckets) of a key by
 * JumpBackHash with SplitMix64, as hash4j.  A BigInt (or safe-integer Number)
 * key is taken as it is; a string or Uint8Array key is hashed by XXH3-64 first,
 * as the extension's jumpbackhash(text | bytea, int).
 */
export function jumpbackhash(key, buckets) {
  checkBuckets(buckets);
  return jumpBack(anyKey('key', key), buckets);
}

/** jumphash(key, buckets): Lamping and Veach's jump consistent hash, keys as jumpbackhash. */
export function jumphash(key, buckets) {
  checkBuckets(buckets);
  return jumpConsistent(anyKey('key', key), buckets);
}
