#!/usr/bin/env node
// The JavaScript client's cross-check program: reads JSON lines
// {"fn": NAME, "args": [...], "types": [...]} on stdin and writes one JSON value
// per line on stdout, the result of the extension's function NAME computed by
// this library, or {"error": SQLSTATE, "message": ...}.  The format, shared with
// the Python and Go clients, is clients/CROSSCHECK.md; test/check-clients
// drives it.  Run ./setup (npm ci) once first.
import { readFileSync } from 'node:fs';
import * as lib from './src/index.js';

const SAFE = 2 ** 53 - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

class CallError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const show = (v) => String(JSON.stringify(v)).slice(0, 60);

const RANGES = { smallint: [-32768n, 32767n], integer: [-2147483648n, 2147483647n], bigint: [INT64_MIN, INT64_MAX] };

/** An integer argument (a JSON integer, or a decimal string) as a BigInt of SQL type `type` (smallint, integer, bigint). */
function integer(v, what, type) {
  const [lo, hi] = RANGES[type];
  const wide = type === 'bigint';
  let n;
  if (typeof v === 'string') {
    if (!/^-?[0-9]+$/.test(v)) throw new CallError('22P02', `invalid input syntax for an integer ${what}: ${JSON.stringify(v.slice(0, 60))}`);
    n = BigInt(v);
  } else if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new CallError('22P02', `${what} must be an integer, got ${v}`);
    if (!Number.isSafeInteger(v) && wide) throw new CallError('22P02', `${what} ${v} is beyond 2^53: give it as a decimal string`);
    n = BigInt(v);
  } else {
    throw new CallError('42883', `${what} must be an integer, got ${show(v)}`);
  }
  if (n < lo || n > hi) throw new CallError('22003', `${what} ${n} is out of range for type ${type}`);
  return n;
}

const int4 = (v, what) => Number(integer(v, what, 'integer'));

function int4List(v, what) {
  if (!Array.isArray(v)) throw new CallError('42883', `${what} must be a list of integers, got ${show(v)}`);
  return v.map((x) => int4(x, `element of ${what}`));
}

function bytea(v, what) {
  if (typeof v !== 'string') throw new CallError('42883', `${what} must be a \\x... string, got ${show(v)}`);
  const m = /^\\x((?:[0-9a-fA-F]{2})*)$/.exec(v);
  if (!m) throw new CallError('22023', `invalid input syntax for type bytea: ${JSON.stringify(v.slice(0, 60))}`);
  return Uint8Array.from(Buffer.from(m[1], 'hex'));
}

function boolean(v, what) {
  if (typeof v !== 'boolean') throw new CallError('42883', `${what} must be true or false, got ${show(v)}`);
  return v;
}

/** A key as the library takes it: a BigInt (bigint), a string (text) or bytes (bytea, a uuid's 16 bytes). */
function key(v, t) {
  if (t === undefined || t === null) {
    if (typeof v === 'string') t = v.startsWith('\\x') ? 'bytea' : 'text';
    else if (typeof v === 'number') t = 'bigint';
    else throw new CallError('42883', `a key must be an integer or a string, got ${show(v)}`);
  }
  if (t === 'bigint') return integer(v, 'key', 'bigint');
  if (t === 'bytea') return bytea(v, 'key');
  if (t === 'text' || t === 'uuid') {
    if (typeof v !== 'string') throw new CallError('42883', `a ${t} key must be a string, got ${show(v)}`);
    if (t === 'text') return v;
    if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(v)) {
      throw new CallError('22P02', `invalid input syntax for type uuid: ${JSON.stringify(v.slice(0, 60))}`);
    }
    return Uint8Array.from(Buffer.from(v.replaceAll('-', ''), 'hex'));
  }
  throw new CallError('42883', `unknown key type ${show(t)}`);
}

/**
 * route's key as the layout's key_type reads it, whatever "types" says: a BigInt
 * (smallint, integer, bigint), a string (text), bytes (bytea), or a uuid's text
 * form, which the router parses itself.
 */
function routeKey(v, keyType) {
  if (keyType in RANGES) return integer(v, 'key', keyType);
  if (keyType === 'bytea') return bytea(v, 'key');
  if (typeof v !== 'string') throw new CallError('42883', `a ${keyType} key must be a string, got ${show(v)}`);
  return v;
}

let lastLayoutText = null;
let lastRouter = null;
function router(v) {
  if (typeof v !== 'string') throw new CallError('42883', `a layout must be the text of routing_layout(parent), a string, got ${show(v)}`);
  if (lastLayoutText !== v) {
    lastLayoutText = null;
    lastRouter = new lib.Router(v);
    lastLayoutText = v;
  }
  return lastRouter;
}

let lastRingText = null;
let lastRing = null;
function ring(v) {
  if (typeof v !== 'string') throw new CallError('42883', 'a ring must be its text form, a string');
  if (lastRingText !== v) {
    lastRingText = null;
    lastRing = lib.PartitionRing.parse(v);
    lastRingText = v;
  }
  return lastRing;
}

function arity(fn, args, lo, hi) {
  if (args.length < lo || args.length > hi) {
    throw new CallError('42883', `function ${fn} does not exist for these arguments: ${args.length} arguments, it takes ${lo} to ${hi}`);
  }
}

const hexa = (bytes) => `\\x${Buffer.from(bytes).toString('hex')}`;

function fromState(v) {
  return lib.JumpBackAnchorSet.fromState(bytea(v, 'state'));
}

function call(fn, args, types) {
  const kt = (i) => (Array.isArray(types) ? types[i] : undefined);
  switch (fn) {
    case 'jumpbackhash':
    case 'jumphash': {
      arity(fn, args, 2, 2);
      const k = key(args[0], kt(0));
      const n = int4(args[1], 'buckets');
      return fn === 'jumpbackhash' ? lib.jumpbackhash(k, n) : lib.jumphash(k, n);
    }
    case 'xxh3_64':
      arity(fn, args, 1, 1);
      return lib.xxh3_64(key(args[0], kt(0)));
    case 'jumpbackanchorhash': {
      arity(fn, args, 2, 3);
      const k = key(args[0], kt(0));
      if (typeof args[1] === 'string') {
        arity(fn, args, 2, 2);
        return lib.jumpbackanchorhash(k, bytea(args[1], 'state'));
      }
      const b = int4(args[1], 'buckets');
      const removed = args.length > 2 ? int4List(args[2], 'removed') : [];
      return lib.jumpbackanchorhash(k, b, removed);
    }
    case 'jumpbackanchorhash_state':
      arity(fn, args, 1, 2);
      return lib.jumpbackanchorhashState(int4(args[0], 'buckets'), args.length > 1 ? int4List(args[1], 'removed') : []);
    case 'jumpbackanchorhash_buckets':
    case 'jumpbackanchorhash_removed': {
      arity(fn, args, 1, 1);
      const s = lib.jumpbackanchorhashFromState(bytea(args[0], 'state'));
      return fn === 'jumpbackanchorhash_buckets' ? s.buckets : s.removed;
    }
    case 'jumpbackanchorhash_add_bucket': {
      arity(fn, args, 1, 2);
      if (typeof args[0] === 'string') {
        arity(fn, args, 1, 1);
        const s = fromState(args[0]);
        const a = lib.jumpbackanchorhashAddBucket(s.buckets, s.removed);
        return { state: lib.jumpbackanchorhashState(a.buckets, a.removed), bucket: a.bucket };
      }
      const a = lib.jumpbackanchorhashAddBucket(int4(args[0], 'buckets'), args.length > 1 ? int4List(args[1], 'removed') : []);
      return { buckets: a.buckets, removed: a.removed, bucket: a.bucket };
    }
    case 'jumpbackanchorhash_remove_bucket': {
      arity(fn, args, 2, 3);
      if (typeof args[0] === 'string') {
        arity(fn, args, 2, 2);
        const s = fromState(args[0]);
        const d = lib.jumpbackanchorhashRemoveBucket(s.buckets, s.removed, int4(args[1], 'bucket'));
        return lib.jumpbackanchorhashState(d.buckets, d.removed);
      }
      arity(fn, args, 3, 3);
      const b = int4(args[0], 'buckets');
      const removed = int4List(args[1], 'removed');
      const d = lib.jumpbackanchorhashRemoveBucket(b, removed, int4(args[2], 'bucket'));
      return { buckets: d.buckets, removed: d.removed };
    }
    case 'ringsteady_subset':
    case 'rocksteadier_subset': {
      arity(fn, args, 3, 4);
      const [f, n, k] = ['frontend', 'backends', 'subset_size'].map((w, i) => int4(args[i], w));
      if (fn === 'ringsteady_subset') {
        return lib.ringsteadySubset(f, n, k, args.length > 3 ? boolean(args[3], 'backend_scaling') : true);
      }
      return lib.rocksteadierSubset(f, n, k, args.length > 3 ? int4(args[3], 'lot_size') : 10);
    }
    case 'ring_partition':
    case 'ring_nodes': {
      arity(fn, args, 2, 2);
      const k = key(args[1], kt(1));
      const r = ring(args[0]);
      return fn === 'ring_partition' ? r.partition(k) : r.nodesOf(k);
    }
    case 'ring_partition_nodes': {
      arity(fn, args, 2, 2);
      const x = int4(args[1], 'partition');
      return ring(args[0]).partitionNodes(x);
    }
    case 'ring_handoff_nodes': {
      arity(fn, args, 2, 3);
      const k = key(args[1], kt(1));
      const c = args.length > 2 ? int4(args[2], 'count') : 3;
      return ring(args[0]).handoffNodes(k, c);
    }
    case 'ring_partition_handoff_nodes': {
      arity(fn, args, 2, 3);
      const x = int4(args[1], 'partition');
      const c = args.length > 2 ? int4(args[2], 'count') : 3;
      return ring(args[0]).partitionHandoffNodes(x, c);
    }
    case 'route': {
      arity(fn, args, 2, 2);
      const r = router(args[0]);
      const x = r.route(routeKey(args[1], r.keyType));
      return { bucket: x.bucket, partition: x.partition, server: x.server };
    }
    default:
      throw new CallError('42883', `function ${show(fn)} does not exist (or is not in the clients)`);
  }
}

/** A result as JSON: BigInts within 2^53 as numbers, beyond as decimal strings; bytes as \x hex. */
function jsonable(v) {
  if (typeof v === 'bigint') return v >= -SAFE && v <= SAFE ? Number(v) : String(v);
  if (v instanceof Uint8Array) return hexa(v);
  if (Array.isArray(v)) return v.map(jsonable);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonable(x)]));
  return v;
}

function answer(line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    return { error: '08P01', message: `not a JSON line: ${e.message}` };
  }
  if (req === null || typeof req !== 'object' || Array.isArray(req) || typeof req.fn !== 'string' || !Array.isArray(req.args)) {
    return { error: '08P01', message: 'a line is {"fn": NAME, "args": [...]}' };
  }
  if (req.types !== undefined && req.types !== null && !Array.isArray(req.types)) {
    return { error: '08P01', message: '"types" must be a list' };
  }
  try {
    return jsonable(call(req.fn, req.args, req.types));
  } catch (e) {
    if (e instanceof CallError) return { error: e.code, message: e.message };
    if (typeof e.sqlstate === 'string') return { error: e.sqlstate, message: e.message };
    if (e instanceof TypeError) return { error: '42883', message: `TypeError: ${e.message}` };
    return { error: 'XX000', message: String(e && e.stack ? e.stack : e) };
  }
}

// the answers go out in chunks of about 1 MB; node writes them all before it exits
let chunk = '';
for (const line of readFileSync(0, 'utf8').split('\n')) {
  if (line.trim() === '') continue;
  chunk += `${JSON.stringify(answer(line))}\n`;
  if (chunk.length > 1 << 20) {
    process.stdout.write(chunk);
    chunk = '';
  }
}
process.stdout.write(chunk);
