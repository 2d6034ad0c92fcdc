// Routing a key of a table partitioned by the extension, from the document of
// routing_layout(parent) (docs/reference.md, "Routing layout"): the key's
// bucket by the layout's hash function, computed by this library exactly as
// the database computes it, then the partition and server of that bucket.
import { checkInt, describe, jumpbackhash, jumphash } from './hash.js';
import { JumpBackAnchorSet } from './anchor.js';

const METHODS = ['jumpbackhash', 'jumphash', 'jumpbackanchorhash', 'hash_operator_class'];
const INTEGER_TYPES = { smallint: 2n ** 15n, integer: 2n ** 31n, bigint: 2n ** 63n };
const KEY_TYPES = ['smallint', 'integer', 'bigint', 'text', 'bytea', 'uuid'];
const INT32_MAX = 2147483647;
const HEX = /^[0-9a-fA-F]{2}$/;

/** An Error of class Kind whose `sqlstate` is code. */
function sqlError(Kind, code, message) {
  const e = new Kind(message);
  e.sqlstate = code;
  return e;
}

/** Not a routing_layout document: 22023, as the extension's invalid parameter values. */
function badLayout(message) {
  return sqlError(RangeError, '22023', `Router: not a routing_layout document: ${message}`);
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isInt = (v) => typeof v === 'number' && Number.isInteger(v);

function member(doc, name, check, what, of = '') {
  if (!Object.hasOwn(doc, name)) throw badLayout(`"${name}"${of} is missing`);
  const v = doc[name];
  if (!check(v)) throw badLayout(`"${name}"${of} must be ${what}, got ${describe(v)}`);
  return v;
}

const str = (v) => typeof v === 'string';
const strOrNull = (v) => v === null || typeof v === 'string';

/** The unqualified name of a (possibly schema-qualified, possibly quoted) function name. */
function functionName(name) {
  const m = /(?:^|\.)("(?:[^"]|"")+"|[^".]+)$/.exec(name);
  if (!m) return null;
  return m[1].startsWith('"') ? m[1].slice(1, -1).replaceAll('""', '"') : m[1];
}

/**
 * The 16 bytes of a uuid in its text form, as PostgreSQL's uuid input reads
 * it: 32 hexadecimal digits, a hyphen allowed after any group of four (not at
 * the end), the whole optionally in braces; null if it is not one.
 */
export function parseUuid(text) {
  let s = text;
  if (s.startsWith('{')) {
    if (!s.endsWith('}') || s.length < 2) return null;
    s = s.slice(1, -1);
  }
  const bytes = new Uint8Array(16);
  let p = 0;
  for (let i = 0; i < 16; i++) {
    const pair = s.slice(p, p + 2);
    if (!HEX.test(pair)) return null;
    bytes[i] = parseInt(pair, 16);
    p += 2;
    if (s[p] === '-' && i % 2 === 1 && i < 15) p++;
  }
  return p === s.length ? bytes : null;
}

/**
 * A router of the keys of one table, built from the document of
 * routing_layout(parent): the JSON text or the parsed object (as node-postgres
 * returns a jsonb).  route(key) gives the partition and server of the key's
 * bucket; throughCoordinator(bucket) whether, while an operation is in
 * progress, that bucket's keys go through the server the layout came from.
 * A document that is not such a layout throws a RangeError with sqlstate 22023.
 */
export class Router {
  #set = null;
  #entries = new Map(); // bucket -> frozen route
  #coordinatorBuckets = null; // null: every bucket (when inProgress is not null)

  /** @param {string | object} layout the document of routing_layout(parent), as text or parsed */
  constructor(layout) {
    let doc = layout;
    if (typeof layout === 'string') {
      try {
        doc = JSON.parse(layout);
      } catch (e) {
        throw badLayout(`not JSON (${e.message})`);
      }
    }
    if (!isObject(doc)) throw badLayout(`expected a JSON object (the jsonb of routing_layout(parent)), got ${describe(doc)}`);

    const table = member(doc, 'table', str, 'a string');
    const method = member(doc, 'method', (v) => METHODS.includes(v), `one of ${METHODS.join(', ')}`);
    const hashFunction = member(doc, 'hash_function', str, 'a string');
    const want = method === 'hash_operator_class' ? 'jumpbackhash' : method;
    if (functionName(hashFunction) !== want) {
      throw badLayout(`"hash_function" ${describe(hashFunction)} is not the function ${want} of method ${method}`);
    }
    const key = member(doc, 'key', str, 'a string');
    const keyColumn = member(doc, 'key_column', strOrNull, 'a string or null');
    const keyType = member(doc, 'key_type', (v) => KEY_TYPES.includes(v), `one of ${KEY_TYPES.join(', ')}`);
    if ((keyType === 'smallint' || keyType === 'integer') && method !== 'hash_operator_class') {
      throw badLayout(`"key_type" ${keyType} is only that of an operator class, not of method ${method}`);
    }
    const keyHash = member(doc, 'key_hash', (v) => v === 'value' || v === 'xxh3_64', '"value" or "xxh3_64"');
    const wantHash = keyType in INTEGER_TYPES ? 'value' : 'xxh3_64';
    if (keyHash !== wantHash) throw badLayout(`"key_hash" of a ${keyType} key is "${wantHash}", got "${keyHash}"`);
    const buckets = member(doc, 'buckets', (v) => isInt(v) && v >= 1 && v <= INT32_MAX, 'an integer from 1 to 2147483647');
    const removed = member(doc, 'removed', (v) => Array.isArray(v) && v.every(isInt), 'a list of integers');
    if (removed.length > 0 && method !== 'jumpbackanchorhash') {
      throw badLayout(`"removed" must be empty for method ${method}, got ${describe(removed)}`);
    }
    if (method === 'jumpbackanchorhash') {
      try {
        this.#set = new JumpBackAnchorSet(buckets, removed);
      } catch (e) {
        throw badLayout(`"buckets" and "removed": ${e.message}`);
      }
      if (removed.length >= buckets) throw badLayout(`all ${buckets} buckets are removed`);
    }
    const removedSet = new Set(removed);

    const partitions = member(doc, 'partitions', Array.isArray, 'a list');
    const list = partitions.map((p, i) => {
      const where = `partition ${i + 1}`;
      if (!isObject(p)) throw badLayout(`${where} must be an object, got ${describe(p)}`);
      for (const name of ['bucket', 'partition', 'server', 'remote_table']) {
        if (!Object.hasOwn(p, name)) throw badLayout(`${where} has no "${name}"`);
      }
      const b = p.bucket;
      if (b !== null && (!isInt(b) || b < 0 || b >= buckets || removedSet.has(b))) {
        throw badLayout(`the bucket of ${where} must be null or a bucket of the layout, got ${describe(b)}`);
      }
      if (!str(p.partition)) throw badLayout(`the "partition" of ${where} must be a string, got ${describe(p.partition)}`);
      if (!strOrNull(p.server)) throw badLayout(`the "server" of ${where} must be a string or null, got ${describe(p.server)}`);
      if (!strOrNull(p.remote_table)) {
        throw badLayout(`the "remote_table" of ${where} must be a string or null, got ${describe(p.remote_table)}`);
      }
      const entry = Object.freeze({ bucket: b, partition: p.partition, server: p.server, remoteTable: p.remote_table });
      if (b !== null) {
        if (this.#entries.has(b)) throw badLayout(`bucket ${b} is the bucket of two partitions`);
        this.#entries.set(b, entry);
      }
      return entry;
    });

    const servers = member(doc, 'servers', isObject, 'an object');
    const serverCopy = {};
    for (const [name, options] of Object.entries(servers)) {
      if (!isObject(options) || !Object.values(options).every(str)) {
        throw badLayout(`the options of server ${describe(name)} must be an object of strings`);
      }
      serverCopy[name] = Object.freeze({ ...options });
    }

    const progress = member(doc, 'in_progress', (v) => v === null || isObject(v), 'an object or null');
    let inProgress = null;
    if (progress !== null) {
      const of = ' of "in_progress"';
      const operation = member(progress, 'operation', str, 'a string', of);
      const phase = member(progress, 'phase', str, 'a string', of);
      const interrupted = member(progress, 'interrupted', (v) => typeof v === 'boolean', 'true or false', of);
      const pb = member(progress, 'buckets', (v) => v === null || (Array.isArray(v) && v.every((x) => x === null || isInt(x))),
        'null or a list of buckets', of);
      inProgress = Object.freeze({ operation, phase, interrupted, buckets: pb === null ? null : Object.freeze(pb.slice()) });
      this.#coordinatorBuckets = pb === null ? null : new Set(pb.filter((x) => x !== null));
    }
    const version = member(doc, 'version', (v) => str(v) && /^[0-9a-f]{16}$/.test(v), '16 hexadecimal digits');

    /** The table, schema-qualified. */
    this.table = table;
    /** jumpbackhash, jumphash, jumpbackanchorhash or hash_operator_class. */
    this.method = method;
    this.hashFunction = hashFunction;
    /** The partition key's expression, and its column (null: an expression the application computes). */
    this.key = key;
    this.keyColumn = keyColumn;
    /** What route() takes the key as: smallint, integer, bigint, text, bytea or uuid. */
    this.keyType = keyType;
    this.keyHash = keyHash;
    this.buckets = buckets;
    this.removed = Object.freeze(removed.slice());
    /** Every partition: {bucket (null: not one bucket of the layout), partition, server, remoteTable}. */
    this.partitions = Object.freeze(list);
    /** Per server that holds a partition, the options a client connects with (no secrets). */
    this.servers = Object.freeze(serverCopy);
    /** null, or the operation on the table that has not ended: {operation, phase, interrupted, buckets}. */
    this.inProgress = inProgress;
    /** Changes with the layout, a partition's place, and an operation beginning or ending. */
    this.version = version;
    Object.freeze(this);
  }

  /**
   * The key as the hash function takes it: a BigInt (smallint, integer,
   * bigint), a string (text) or bytes (bytea, a uuid's 16).
   */
  #read(key) {
    const t = this.keyType;
    if (t in INTEGER_TYPES) {
      const top = INTEGER_TYPES[t];
      let n;
      if (typeof key === 'bigint') {
        n = key;
      } else if (typeof key === 'number') {
        if (!Number.isInteger(key)) {
          throw sqlError(RangeError, '22P02', `Router.route(): a ${t} key must be an integer, got ${key}`);
        }
        n = BigInt(key);
        if (!Number.isSafeInteger(key) && n >= -top && n < top) {
          throw sqlError(RangeError, '22023', `Router.route(): a ${t} key beyond 2^53 must be a BigInt or a decimal string, got the Number ${key}`);
        }
      } else if (typeof key === 'string') {
        if (!/^[+-]?[0-9]+$/.test(key)) {
          throw sqlError(SyntaxError, '22P02', `Router.route(): invalid input syntax for type ${t}: ${describe(key)}`);
        }
        n = BigInt(key);
      } else {
        throw new TypeError(`Router.route(): a ${t} key must be a BigInt, a safe-integer Number or a decimal string, got ${describe(key)}`);
      }
      if (n < -top || n >= top) {
        throw sqlError(RangeError, '22003', `Router.route(): key ${n} is out of range for type ${t}`);
      }
      return n;
    }
    if (t === 'text') {
      if (typeof key !== 'string') throw new TypeError(`Router.route(): a text key must be a string, got ${describe(key)}`);
      if (!key.isWellFormed()) {
        throw sqlError(RangeError, '22023', `Router.route(): a text key must be well-formed Unicode (a lone surrogate), got ${describe(key)}`);
      }
      return key;
    }
    if (t === 'bytea') {
      if (key instanceof Uint8Array) return key;
      if (ArrayBuffer.isView(key)) return new Uint8Array(key.buffer, key.byteOffset, key.byteLength);
      throw new TypeError(`Router.route(): a bytea key must be a Uint8Array (or Buffer), got ${describe(key)}`);
    }
    // uuid: its text form, parsed (never hashed as text), or its 16 bytes
    if (typeof key === 'string') {
      const bytes = parseUuid(key);
      if (bytes === null) throw sqlError(SyntaxError, '22P02', `Router.route(): invalid input syntax for type uuid: ${describe(key)}`);
      return bytes;
    }
    if (key instanceof Uint8Array) {
      if (key.length !== 16) {
        throw sqlError(RangeError, '22P02', `Router.route(): a uuid key given as bytes must be its 16 bytes, got ${key.length}`);
      }
      return key;
    }
    throw new TypeError(`Router.route(): a uuid key must be a string in uuid text form or its 16 bytes as a Uint8Array, got ${describe(key)}`);
  }

  /** The bucket of a key, by the layout's hash function (the key as in route()). */
  bucket(key) {
    const k = this.#read(key);
    if (this.#set !== null) return this.#set.bucket(k);
    return this.method === 'jumphash' ? jumphash(k, this.buckets) : jumpbackhash(k, this.buckets);
  }

  /**
   * The route of a key: {bucket, partition, server, remoteTable} (frozen), the
   * layout's partition of its bucket.  The key as the layout's key_type:
   * smallint, integer, bigint: a BigInt, a safe-integer Number or a decimal
   * string; text: a string; bytea: a Uint8Array; uuid: a string in uuid text
   * form or its 16 bytes.  A bucket no partition holds throws a RangeError
   * with sqlstate 23514, as PostgreSQL for a row no partition takes.
   */
  route(key) {
    const bucket = this.bucket(key);
    const entry = this.#entries.get(bucket);
    if (entry === undefined) {
      throw sqlError(RangeError, '23514', `Router.route(): no partition of ${this.table} holds bucket ${bucket}, the key's bucket`);
    }
    return entry;
  }

  /**
   * Whether the keys of bucket go through the server the layout came from (the
   * coordinator) rather than straight to their partition's server: while an
   * operation is in progress that names the bucket (or every bucket).  A
   * route (the result of route()) may be given in place of its bucket.
   */
  throughCoordinator(bucket) {
    if (isObject(bucket) && Object.hasOwn(bucket, 'bucket')) bucket = bucket.bucket;
    checkInt('Router.throughCoordinator(): bucket', bucket);
    if (this.inProgress === null) return false;
    return this.#coordinatorBuckets === null || this.#coordinatorBuckets.has(bucket);
  }
}
