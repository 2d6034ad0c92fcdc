// JumpBackAnchorHash: the extension's src/core/jumpbackanchor.c and the checks
// of src/jumpbackanchor_sql.c, ported.
import { anyKey, argError, checkInt, describe, jumpBackDrawing, SplitMix64 } from './hash.js';

export const MAX_REMOVED = 1 << 20;
const INT32_MAX = 2147483647;

function uniformBelow(rng, bound) {
  const s = BigInt(bound);
  let product = (rng.next() & 0xffffffffn) * s;
  if ((product & 0xffffffffn) < s) {
    const threshold = (1n << 32n) % s;
    while ((product & 0xffffffffn) < threshold) product = (rng.next() & 0xffffffffn) * s;
  }
  return Number(product >> 32n);
}

function removedList(removed) {
  if (removed === undefined) return [];
  if (!Array.isArray(removed) && !(removed instanceof Int32Array)) {
    throw argError('type', `removed buckets must be an array of integers, got ${describe(removed)}`);
  }
  if (removed.length > MAX_REMOVED) {
    throw argError('limit', `too many removed buckets: ${removed.length} (at most ${MAX_REMOVED} buckets can be removed)`);
  }
  const list = Array.from(removed);
  list.forEach((b, i) => {
    if (b === null || b === undefined) throw argError('type', 'removed buckets must not contain null');
    checkInt(`removed bucket (element ${i + 1})`, b);
  });
  return list;
}

/**
 * A set of buckets of JumpBackAnchorHash, decoded and checked once for many
 * lookups: `buckets` (hash4j's historicMaxNumBuckets) and the removed buckets,
 * oldest first.  The same checks and messages as the extension.
 */
export class JumpBackAnchorSet {
  constructor(buckets, removed = [], form = 'list') {
    checkInt('buckets', buckets);
    const list = removedList(removed);
    if (buckets < 0) {
      throw argError('range', form === 'state'
        ? `invalid jumpbackanchorhash state: number of buckets is negative, got ${buckets}`
        : `number of buckets must not be negative, got ${buckets}`);
    }
    const where = form === 'state' ? 'removed bucket' : 'element';
    list.forEach((b, r) => {
      if (b < 0 || b >= buckets) {
        throw argError('range', buckets === 0
          ? `removed bucket ${b} is out of range for 0 buckets`
          : `removed bucket ${b} is out of range for ${buckets} buckets (${where} ${r + 1} of the removed buckets; they must be between 0 and ${buckets - 1})`);
      }
    });
    /** @type {Map<number, number>} bucket -> stack position ("entry") */
    const entryOf = new Map();
    const sorted = list.map((b, r) => [b, r]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i][0] === sorted[i - 1][0]) {
        throw argError('range', `bucket ${sorted[i][0]} is removed twice (${where}s ${sorted[i - 1][1] + 1} and ${sorted[i][1] + 1} of the removed buckets)`);
      }
    }
    list.forEach((b, r) => entryOf.set(b, r));
    this.buckets = buckets;
    this.removed = Object.freeze(list.slice());
    this.entryOf = entryOf;
    this.nextBucket = new Int32Array(list.length);
    this.nextEntry = new Int32Array(list.length);
    for (let r = 0; r < list.length; r++) {
      const n = buckets - 1 - r;
      const placeEntry = entryOf.has(n) ? entryOf.get(n) : -1;
      const [replacement, replacementEntry] = this.#follow(n, placeEntry, n + 1);
      this.nextBucket[r] = replacement;
      this.nextEntry[r] = replacementEntry;
    }
  }

  /** The set of a state's bytes (hash4j's getState()). */
  static fromState(state) {
    const { buckets, removed } = readState(state);
    return new JumpBackAnchorSet(buckets, removed, 'state');
  }

  #view(entry) {
    return this.buckets - 1 - entry;
  }

  #follow(place, e, view) {
    let bucket = place;
    let steps = 0;
    while (e >= 0 && this.#view(e) >= view) {
      if (steps++ > this.removed.length) throw new Error('jumpbackanchorhash: a chain of replacements is longer than the removals');
      bucket = this.nextBucket[e];
      e = this.nextEntry[e];
    }
    return [bucket, e];
  }

  /** Whether bucket is one of the removed buckets. */
  isRemoved(bucket) {
    return this.entryOf.has(bucket);
  }

  /** The bucket of a key (BigInt/Number as it is, string/Uint8Array by XXH3-64). */
  bucket(key) {
    const k = anyKey('key', key);
    const m = this.removed.length;
    if (this.buckets === 0) throw argError('range', 'number of buckets must be at least 1, got 0');
    if (this.buckets <= m) throw argError('range', `all ${this.buckets} buckets are removed (add a bucket back)`);
    const rng = new SplitMix64(k);
    let bucket = jumpBackDrawing(rng, this.buckets);
    let entry = m ? (this.entryOf.has(bucket) ? this.entryOf.get(bucket) : -1) : -1;
    while (entry >= 0) {
      const view = this.#view(entry);
      if (view === 0) break;
      const place = uniformBelow(rng, view);
      [bucket, entry] = this.#follow(place, this.entryOf.has(place) ? this.entryOf.get(place) : -1, view);
    }
    return bucket;
  }

  /** The state bytes of this set (hash4j's getState()). */
  state() {
    return jumpbackanchorhashState(this.buckets, this.removed);
  }
}

/**
 * jumpbackanchorhash(key, buckets, removed = []) or jumpbackanchorhash(key, state):
 * the bucket of key among `buckets` less the removed ones, as hash4j's
 * JumpBackAnchorHash.  For many keys, make a JumpBackAnchorSet once.
 */
export function jumpbackanchorhash(key, bucketsOrState, removed = []) {
  const set = bucketsOrState instanceof Uint8Array
    ? JumpBackAnchorSet.fromState(bucketsOrState)
    : new JumpBackAnchorSet(bucketsOrState, removed);
  return set.bucket(key);
}

/** jumpbackanchorhash_state(buckets, removed): the state bytes (little-endian int32s), checked whole. */
export function jumpbackanchorhashState(buckets, removed = []) {
  const list = new JumpBackAnchorSet(buckets, removed).removed;
  const bytes = new Uint8Array(4 + 4 * list.length);
  const view = new DataView(bytes.buffer);
  view.setInt32(0, buckets, true);
  list.forEach((b, i) => view.setInt32(4 + 4 * i, b, true));
  return bytes;
}

/**
 * The buckets and removed buckets of a state (jumpbackanchorhash_buckets and
 * jumpbackanchorhash_removed), checked whole as the extension checks it: the
 * removed buckets in range and none twice.
 */
export function jumpbackanchorhashFromState(state) {
  const set = JumpBackAnchorSet.fromState(state);
  return { buckets: set.buckets, removed: set.removed.slice() };
}

/** The numbers of state bytes, checked for format only. */
function readState(state) {
  if (!(state instanceof Uint8Array)) {
    throw argError('type', `state must be a Uint8Array, got ${describe(state)}`);
  }
  if (state.length < 4 || state.length % 4 !== 0) {
    throw argError('range', `invalid jumpbackanchorhash state: length ${state.length} is not a positive multiple of 4`);
  }
  const view = new DataView(state.buffer, state.byteOffset, state.byteLength);
  const buckets = view.getInt32(0, true);
  if (buckets < 0) throw argError('range', `invalid jumpbackanchorhash state: number of buckets is negative, got ${buckets}`);
  const count = (state.length - 4) / 4;
  if (count > MAX_REMOVED) throw argError('limit', `too many removed buckets: ${count} (at most ${MAX_REMOVED} buckets can be removed)`);
  const removed = [];
  for (let i = 0; i < count; i++) removed.push(view.getInt32(4 + 4 * i, true));
  return { buckets, removed };
}

/**
 * hash4j's addBucket(): {buckets, removed, bucket} after taking back the most
 * recently removed bucket, or adding bucket `buckets` when none is removed.
 */
export function jumpbackanchorhashAddBucket(buckets, removed = []) {
  const set = new JumpBackAnchorSet(buckets, removed);
  const list = set.removed.slice();
  if (list.length > 0) {
    const bucket = list.pop();
    return { buckets, removed: list, bucket };
  }
  if (buckets === INT32_MAX) {
    throw argError('limit', `cannot add a bucket to ${buckets} buckets with none removed (there are at most 2147483647 buckets)`);
  }
  return { buckets: buckets + 1, removed: list, bucket: buckets };
}

/** hash4j's removeBucket(bucket): {buckets, removed} after the removal. */
export function jumpbackanchorhashRemoveBucket(buckets, removed, bucket) {
  const set = new JumpBackAnchorSet(buckets, removed);
  checkInt('bucket', bucket);
  if (bucket >= 0 && bucket < buckets && set.isRemoved(bucket)) {
    throw argError('range', `bucket ${bucket} is already removed`);
  }
  if (bucket < 0 || bucket >= buckets) {
    throw argError('range', buckets === 0
      ? `bucket ${bucket} is out of range for 0 buckets (the set is empty)`
      : `bucket ${bucket} is out of range for ${buckets} buckets (the buckets of the set are between 0 and ${buckets - 1})`);
  }
  const list = set.removed.slice();
  if (buckets - 1 === list.length) return { buckets: 0, removed: [] };
  if (bucket === buckets - 1 && list.length === 0) return { buckets: buckets - 1, removed: [] };
  if (list.length >= MAX_REMOVED) {
    throw argError('limit', `too many removed buckets: ${list.length + 1} (at most ${MAX_REMOVED} buckets can be removed)`);
  }
  list.push(bucket);
  return { buckets, removed: list };
}
