#!/usr/bin/env node
// Cross-check of the JavaScript client against the extension itself: draws
// random inputs (seed printed; set it with CLIENT_CROSSCHECK_SEED), has the
// extension compute the expected values through psql (PGHOST, PGPORT, PGUSER,
// PGDATABASE), and compares them with the library's.  Installs nothing (run
// ./setup once first); CLIENT_CROSSCHECK_VERBOSE=1 times each query.  The last
// line is "N passed, M failed", and the exit status is non-zero on any failure.
import { execFileSync } from 'node:child_process';
import * as lib from './src/index.js';

const seedText = process.env.CLIENT_CROSSCHECK_SEED || String(Math.floor(Math.random() * 2 ** 48));
if (!/^\d+$/.test(seedText)) {
  console.error(`CLIENT_CROSSCHECK_SEED must be a non-negative integer, got "${seedText}"`);
  process.exit(2);
}
console.log(`check-against-extension (js): seed ${seedText} (CLIENT_CROSSCHECK_SEED=${seedText} repeats this run)`);

// the inputs' own generator (xorshift-multiply, independent of the library's code)
let state = BigInt(seedText) ^ 0x5deece66dn;
function rand64() {
  state = (state + 0x632be59bd9b4e019n) & ((1n << 64n) - 1n);
  let z = state;
  z = ((z ^ (z >> 33n)) * 0xff51afd7ed558ccdn) & ((1n << 64n) - 1n);
  z = ((z ^ (z >> 33n)) * 0xc4ceb9fe1a85ec53n) & ((1n << 64n) - 1n);
  return z ^ (z >> 33n);
}
const below = (n) => Number(rand64() % BigInt(n)); // n < 2^53
const between = (lo, hi) => lo + below(hi - lo + 1);
const pick = (list) => list[below(list.length)];
const chance = (p) => below(1000000) < p * 1000000;
const signed = (u) => BigInt.asIntN(64, u);

const INT32_MAX = 2147483647;
const EDGE_KEYS = [0n, 1n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 42n, -42n, 2n ** 32n, -(2n ** 32n), 2n ** 53n + 1n];
function randomKey() {
  if (chance(0.05)) return pick(EDGE_KEYS);
  if (chance(0.2)) return BigInt(between(-1000000, 1000000));
  return signed(rand64());
}
function randomBuckets() {
  const r = below(10);
  if (r === 0) return pick([1, 2, 3, INT32_MAX, INT32_MAX - 1, 2 ** 30, 2 ** 30 + 1]);
  if (r < 5) return between(1, 100);
  if (r < 8) return between(1, 100000);
  return between(1, INT32_MAX);
}
const RANGES = [[0x20, 0x7e], [0xa0, 0x24f], [0x370, 0x3ff], [0x400, 0x4ff], [0x4e00, 0x9fff], [0x1f300, 0x1faff], [0x1, 0x1f], [0x10000, 0x10ffff]];
function randomText() {
  if (chance(0.03)) return pick(['', 'a', 'é', '42', "it's", 'back\\slash', '"quoted"', '日本語', '🙂', 'NULL', ' ']);
  const length = chance(0.1) ? between(100, 1000) : between(0, 24);
  let s = '';
  for (let i = 0; i < length; i++) {
    const [lo, hi] = chance(0.6) ? RANGES[0] : pick(RANGES);
    let c = between(lo, hi);
    if (c >= 0xd800 && c <= 0xdfff) c = 0x41;
    s += String.fromCodePoint(c);
  }
  return s;
}
function randomBytes() {
  const b = new Uint8Array(chance(0.1) ? between(100, 600) : between(0, 40));
  for (let i = 0; i < b.length; i++) b[i] = below(256);
  return b;
}
const hex = (bytes) => Buffer.from(bytes).toString('hex');
const utf8hex = (s) => Buffer.from(s, 'utf8').toString('hex');
const arr = (list) => `{${list.join(',')}}`;

function psql(sql) {
  const started = Date.now();
  const out = execFileSync('psql', ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-f', '-'], {
    input: sql,
    maxBuffer: 1 << 30,
    encoding: 'utf8',
  });
  if (process.env.CLIENT_CROSSCHECK_VERBOSE) console.log(`  psql: ${Date.now() - started} ms: ${sql.slice(0, 60).replace(/\s+/g, ' ')}`);
  return out.split('\n').filter((line, i, all) => i < all.length - 1 || line !== '');
}

let passed = 0;
let failed = 0;
// an error of the check itself (psql failing, a bug here) is one failure more
process.on('uncaughtException', (e) => {
  console.log(`check-against-extension stopped: ${e.stack || e}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
const shown = new Map();
function check(fn, input, expected, actualThunk) {
  let actual;
  try {
    actual = String(actualThunk());
  } catch (e) {
    actual = `error: ${e.message}`;
  }
  if (actual === expected) {
    passed++;
    return;
  }
  failed++;
  const n = shown.get(fn) || 0;
  shown.set(fn, n + 1);
  if (n < 5) console.log(`FAIL ${fn}(${input}): extension ${expected}, library ${actual}`);
}
const fmt = (list) => arr(list);

psql('SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS subsetting;');

// ---- text and bytea keys: xxh3_64, jumpbackhash, jumphash ----
{
  const cases = [];
  for (let i = 0; i < 4000; i++) cases.push({ text: randomText(), n: randomBuckets() });
  const rows = psql(`SELECT xxh3_64(t), jumpbackhash(t, n), jumphash(t, n)
    FROM (SELECT convert_from(decode(h, 'hex'), 'UTF8') AS t, n, i
          FROM unnest(ARRAY[${cases.map((c) => `'${utf8hex(c.text)}'`).join(',')}]::text[],
                      ARRAY[${cases.map((c) => c.n).join(',')}]::int[]) WITH ORDINALITY AS u(h, n, i)) s
    ORDER BY i;`);
  cases.forEach((c, i) => {
    const [x, b, j] = rows[i].split('|');
    const input = `${JSON.stringify(c.text.slice(0, 30))}${c.text.length > 30 ? '...' : ''}`;
    check('xxh3_64(text)', input, x, () => lib.xxh3_64(c.text));
    check('jumpbackhash(text)', `${input}, ${c.n}`, b, () => lib.jumpbackhash(c.text, c.n));
    check('jumphash(text)', `${input}, ${c.n}`, j, () => lib.jumphash(c.text, c.n));
  });
}
{
  const cases = [];
  for (let i = 0; i < 2000; i++) cases.push({ bytes: randomBytes(), n: randomBuckets() });
  const rows = psql(`SELECT xxh3_64(b), jumpbackhash(b, n), jumphash(b, n)
    FROM (SELECT decode(h, 'hex') AS b, n, i
          FROM unnest(ARRAY[${cases.map((c) => `'${hex(c.bytes)}'`).join(',')}]::text[],
                      ARRAY[${cases.map((c) => c.n).join(',')}]::int[]) WITH ORDINALITY AS u(h, n, i)) s
    ORDER BY i;`);
  cases.forEach((c, i) => {
    const [x, b, j] = rows[i].split('|');
    const input = `bytes ${hex(c.bytes).slice(0, 40)}`;
    check('xxh3_64(bytea)', input, x, () => lib.xxh3_64(c.bytes));
    check('jumpbackhash(bytea)', `${input}, ${c.n}`, b, () => lib.jumpbackhash(c.bytes, c.n));
    check('jumphash(bytea)', `${input}, ${c.n}`, j, () => lib.jumphash(c.bytes, c.n));
  });
}

// ---- uuid keys: their 16 bytes ----
{
  const cases = [];
  for (let i = 0; i < 2000; i++) {
    const b = new Uint8Array(16);
    for (let j = 0; j < 16; j++) b[j] = chance(0.05) ? 0 : below(256);
    cases.push({ bytes: b, n: randomBuckets() });
  }
  const rows = psql(`SELECT u::text, xxh3_64(u), jumpbackhash(u, n), jumphash(u, n), jumpbackanchorhash(u, n, '{}')
    FROM (SELECT h::uuid AS u, n, i
          FROM unnest(ARRAY[${cases.map((c) => `'${hex(c.bytes)}'`).join(',')}]::text[],
                      ARRAY[${cases.map((c) => c.n).join(',')}]::int[]) WITH ORDINALITY AS v(h, n, i)) s
    ORDER BY i;`);
  cases.forEach((c, i) => {
    const [u, x, b, j, a] = rows[i].split('|');
    check('xxh3_64(uuid)', u, x, () => lib.xxh3_64(c.bytes));
    check('jumpbackhash(uuid)', `${u}, ${c.n}`, b, () => lib.jumpbackhash(c.bytes, c.n));
    check('jumphash(uuid)', `${u}, ${c.n}`, j, () => lib.jumphash(c.bytes, c.n));
    check('jumpbackanchorhash(uuid)', `${u}, ${c.n}`, a, () => lib.jumpbackanchorhash(c.bytes, c.n));
  });
}

// ---- bigint keys: jumpbackhash, jumphash ----
{
  const cases = [];
  for (let i = 0; i < 6000; i++) cases.push({ key: randomKey(), n: randomBuckets() });
  const rows = psql(`SELECT jumpbackhash(k, n), jumphash(k, n)
    FROM unnest(ARRAY[${cases.map((c) => c.key).join(',')}]::bigint[],
                ARRAY[${cases.map((c) => c.n).join(',')}]::int[]) WITH ORDINALITY AS u(k, n, i)
    ORDER BY i;`);
  cases.forEach((c, i) => {
    const [b, j] = rows[i].split('|');
    check('jumpbackhash(bigint)', `${c.key}, ${c.n}`, b, () => lib.jumpbackhash(c.key, c.n));
    check('jumphash(bigint)', `${c.key}, ${c.n}`, j, () => lib.jumphash(c.key, c.n));
  });
}

// ---- jumpbackanchorhash: list and state forms, the state bytes, add and remove ----
{
  const cases = [];
  for (let s = 0; s < 300; s++) {
    const buckets = pick([between(1, 10), between(1, 200), between(1, 5000), between(1, INT32_MAX)]);
    const most = Math.min(buckets - 1, pick([0, 1, 3, 10, 100, 2000]));
    const removed = new Set();
    const goal = between(0, most);
    while (removed.size < goal) {
      removed.add(chance(0.5) ? buckets - 1 - below(Math.min(buckets, goal * 2 + 1)) : below(buckets));
    }
    const list = [...removed];
    const set = { buckets, removed: list };
    const keys = [];
    for (let i = 0; i < 20; i++) keys.push(randomKey());
    const text = randomText();
    const remove = chance(0.8) && buckets > 0 ? below(buckets) : between(-2, buckets + 2);
    cases.push({ set, keys, text, remove });
  }
  const values = cases.map((c, i) => `(${i}, ${c.set.buckets}, '${arr(c.set.removed)}'::int[], ARRAY[${c.keys.join(',')}]::bigint[], convert_from(decode('${utf8hex(c.text)}', 'hex'), 'UTF8'), ${c.remove})`).join(',\n');
  const rows = psql(`SELECT encode(jumpbackanchorhash_state(b, r), 'hex'),
      (SELECT array_agg(jumpbackanchorhash(k, b, r) ORDER BY j) FROM unnest(ks) WITH ORDINALITY AS u(k, j)),
      (SELECT array_agg(jumpbackanchorhash(k, jumpbackanchorhash_state(b, r)) ORDER BY j) FROM unnest(ks) WITH ORDINALITY AS u(k, j)),
      jumpbackanchorhash(t, b, r),
      (SELECT a.buckets || ';' || array_to_string(a.removed, ',') || ';' || a.bucket FROM jumpbackanchorhash_add_bucket(b, r) a),
      CASE WHEN x >= 0 AND x < b AND NOT x = ANY (r)
           THEN (SELECT d.buckets || ';' || array_to_string(d.removed, ',') FROM jumpbackanchorhash_remove_bucket(b, r, x) d)
           ELSE 'refused' END
    FROM (VALUES ${values}) AS v(i, b, r, ks, t, x) ORDER BY i;`);
  cases.forEach((c, i) => {
    const [state, listAnswers, stateAnswers, textAnswer, added, removedAnswer] = rows[i].split('|');
    const input = `${c.set.buckets}, {${c.set.removed.slice(0, 8).join(',')}${c.set.removed.length > 8 ? ',...' : ''}}`;
    check('jumpbackanchorhash_state', input, state, () => hex(lib.jumpbackanchorhashState(c.set.buckets, c.set.removed)));
    const aset = new lib.JumpBackAnchorSet(c.set.buckets, c.set.removed);
    const expectedList = listAnswers.slice(1, -1).split(',');
    const expectedState = stateAnswers.slice(1, -1).split(',');
    const bytes = Uint8Array.from(Buffer.from(state, 'hex'));
    c.keys.forEach((k, j) => {
      check('jumpbackanchorhash(bigint, buckets, removed)', `${k}, ${input}`, expectedList[j], () => lib.jumpbackanchorhash(k, c.set.buckets, c.set.removed));
      check('jumpbackanchorhash(bigint, state)', `${k}, state ${state.slice(0, 40)}`, expectedState[j], () => lib.jumpbackanchorhash(k, bytes));
      check('JumpBackAnchorSet.bucket', `${k}, ${input}`, expectedList[j], () => aset.bucket(k));
    });
    check('jumpbackanchorhash(text, buckets, removed)', `${JSON.stringify(c.text.slice(0, 20))}, ${input}`, textAnswer, () => aset.bucket(c.text));
    check('jumpbackanchorhash_add_bucket', input, added, () => {
      const a = lib.jumpbackanchorhashAddBucket(c.set.buckets, c.set.removed);
      return `${a.buckets};${a.removed.join(',')};${a.bucket}`;
    });
    check('jumpbackanchorhash_remove_bucket', `${input}, ${c.remove}`, removedAnswer, () => {
      try {
        const d = lib.jumpbackanchorhashRemoveBucket(c.set.buckets, c.set.removed, c.remove);
        return `${d.buckets};${d.removed.join(',')}`;
      } catch (e) {
        if (e instanceof RangeError) return 'refused';
        throw e;
      }
    });
  });
}

// ---- ringsteady_subset and rocksteadier_subset ----
{
  const cases = [];
  for (let i = 0; i < 4000; i++) {
    const backends = randomBuckets();
    const k = chance(0.02) ? between(10000, 200000) : chance(0.1) ? between(0, 2000) : between(0, 40);
    const frontend = chance(0.1) ? pick([0, 1, INT32_MAX, INT32_MAX - 1]) : chance(0.5) ? between(0, 1000) : between(0, INT32_MAX);
    cases.push({ frontend, backends, k, scaling: chance(0.7) });
  }
  const rows = psql(`SELECT ringsteady_subset(f, b, k, s)
    FROM unnest(ARRAY[${cases.map((c) => c.frontend).join(',')}]::int[],
                ARRAY[${cases.map((c) => c.backends).join(',')}]::int[],
                ARRAY[${cases.map((c) => c.k).join(',')}]::int[],
                ARRAY[${cases.map((c) => c.scaling).join(',')}]::boolean[]) WITH ORDINALITY AS u(f, b, k, s, i)
    ORDER BY i;`);
  cases.forEach((c, i) => {
    check('ringsteady_subset', `${c.frontend}, ${c.backends}, ${c.k}, ${c.scaling}`, rows[i], () => fmt(lib.ringsteadySubset(c.frontend, c.backends, c.k, c.scaling)));
  });
}
{
  const cases = [];
  for (let i = 0; i < 3000; i++) {
    const lot = chance(0.03) ? pick([1, 65536, 65535, 1000]) : chance(0.5) ? between(1, 20) : between(1, 3000);
    const backends = chance(0.3) ? between(1, 3 * lot) : randomBuckets();
    // keep the library's work (shuffled tasks) near 200,000 a case
    const maxK = Math.max(0, Math.floor(200000 / lot) - 2);
    const k = Math.min(maxK, chance(0.02) ? between(1000, 50000) : chance(0.3) ? between(0, 300) : between(0, 30));
    const frontend = chance(0.1) ? pick([0, 1, INT32_MAX]) : chance(0.5) ? between(0, 1000) : between(0, INT32_MAX);
    cases.push({ frontend, backends, k, lot });
  }
  const rows = psql(`SELECT rocksteadier_subset(f, b, k, l)
    FROM unnest(ARRAY[${cases.map((c) => c.frontend).join(',')}]::int[],
                ARRAY[${cases.map((c) => c.backends).join(',')}]::int[],
                ARRAY[${cases.map((c) => c.k).join(',')}]::int[],
                ARRAY[${cases.map((c) => c.lot).join(',')}]::int[]) WITH ORDINALITY AS u(f, b, k, l, i)
    ORDER BY i;`);
  cases.forEach((c, i) => {
    check('rocksteadier_subset', `${c.frontend}, ${c.backends}, ${c.k}, ${c.lot}`, rows[i], () => fmt(lib.rocksteadierSubset(c.frontend, c.backends, c.k, c.lot)));
  });
}

// ---- partition rings: built by the extension, read from its text form ----
{
  const configs = [];
  const powers = [1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16];
  for (const partPower of powers) {
    for (let v = 0; v < 2; v++) {
      const nodeCount = pick([1, 2, 3, 5, 8, 13, 30, 60]);
      const ids = new Set();
      while (ids.size < nodeCount) ids.add(chance(0.2) ? between(-1000, 1000) : between(1, 100000));
      const nodes = [...ids];
      const regions = nodes.map(() => below(pick([1, 2, 3])));
      const zones = nodes.map(() => below(pick([1, 2, 4, 6])));
      const weights = nodes.map(() => (chance(0.15) ? 0 : pick([1, 2, 0.5, between(1, 1000) / 7])));
      if (weights.every((w) => w === 0)) weights[0] = 1;
      const positive = weights.filter((w) => w > 0).length;
      const replicas = Math.min(positive, between(1, 5), Math.floor(2 ** 26 / 2 ** partPower));
      const seed = chance(0.5) ? 0n : signed(rand64());
      configs.push({ partPower, nodes, regions, zones, weights, replicas, seed });
    }
  }
  const texts = psql(configs.map((c) => `SELECT ring_build(ARRAY[${c.nodes.join(',')}]::int[], ARRAY[${c.weights.join(',')}]::float8[], ARRAY[${c.zones.join(',')}]::int[], ARRAY[${c.regions.join(',')}]::int[], ${c.partPower}, ${c.replicas}, ${c.seed})::text;`).join('\n'));
  configs.forEach((c, r) => {
    const text = texts[r];
    let ring;
    try {
      ring = lib.PartitionRing.parse(text);
      passed++;
    } catch (e) {
      failed++;
      console.log(`FAIL PartitionRing.parse (ring ${r}: part power ${c.partPower}, ${c.replicas} replicas, ${c.nodes.length} nodes): ${e.message}`);
      return;
    }
    const label = `ring ${r} (p=${c.partPower}, R=${c.replicas}, ${c.nodes.length} nodes)`;
    const cases = [];
    for (let i = 0; i < 250; i++) {
      cases.push({ key: randomKey(), text: randomText(), count: chance(0.1) ? pick([0, 1, 65535, c.nodes.length]) : between(0, 8), partition: below(2 ** c.partPower) });
    }
    const rows = psql(`WITH ring AS (SELECT $ring$${text}$ring$::partition_ring AS ring)
      SELECT ring_partition(ring, k), ring_nodes(ring, k), ring_handoff_nodes(ring, k, n),
             ring_partition(ring, t), ring_nodes(ring, t), ring_handoff_nodes(ring, t, n),
             ring_partition_nodes(ring, p), ring_partition_handoff_nodes(ring, p, n)
      FROM ring, (SELECT k, convert_from(decode(h, 'hex'), 'UTF8') AS t, n, p, i
                  FROM unnest(ARRAY[${cases.map((x) => x.key).join(',')}]::bigint[],
                              ARRAY[${cases.map((x) => `'${utf8hex(x.text)}'`).join(',')}]::text[],
                              ARRAY[${cases.map((x) => x.count).join(',')}]::int[],
                              ARRAY[${cases.map((x) => x.partition).join(',')}]::int[]) WITH ORDINALITY AS u(k, h, n, p, i)) keys
      ORDER BY i;`);
    cases.forEach((x, i) => {
      const [kp, kn, kh, tp, tn, th, pn, ph] = rows[i].split('|');
      const t = JSON.stringify(x.text.slice(0, 20));
      check('ring_partition(bigint)', `${label}, ${x.key}`, kp, () => ring.partition(x.key));
      check('ring_nodes(bigint)', `${label}, ${x.key}`, kn, () => fmt(ring.nodesOf(x.key)));
      check('ring_handoff_nodes(bigint)', `${label}, ${x.key}, ${x.count}`, kh, () => fmt(ring.handoffNodes(x.key, x.count)));
      check('ring_partition(text)', `${label}, ${t}`, tp, () => ring.partition(x.text));
      check('ring_nodes(text)', `${label}, ${t}`, tn, () => fmt(ring.nodesOf(x.text)));
      check('ring_handoff_nodes(text)', `${label}, ${t}, ${x.count}`, th, () => fmt(ring.handoffNodes(x.text, x.count)));
      check('ring_partition_nodes', `${label}, ${x.partition}`, pn, () => fmt(ring.partitionNodes(x.partition)));
      check('ring_partition_handoff_nodes', `${label}, ${x.partition}, ${x.count}`, ph, () => fmt(ring.partitionHandoffNodes(x.partition, x.count)));
    });
  });
}

// ---- arguments: the library refuses exactly what the extension refuses ----
{
  const I = INT32_MAX;
  const edge = () => pick([-I - 1, -2, -1, 0, 1, 2, 3, 10, 65535, 65536, 65537, 2 ** 24, 2 ** 24 + 1, 2 ** 30, I - 1, I]);
  const valid = (f, b, k) => f >= 0 && b >= 1 && k >= 0;
  const cases = [];
  while (cases.length < 1500) {
    const kind = below(5);
    if (kind === 0) {
      const key = randomKey();
      const n = edge();
      cases.push({ sql: `jumpbackhash(${key}, ${n})`, run: () => lib.jumpbackhash(key, n) });
    } else if (kind === 1) {
      const [f, b, k, sc] = [edge(), edge(), chance(0.5) ? edge() : between(-1, 5), chance(0.5)];
      const members = Math.min(k, b);
      if (valid(f, b, k) && members > 100000 && members <= 2 ** 24) continue; // allowed but slow: checked above
      cases.push({ sql: `ringsteady_subset(${f}, ${b}, ${k}, ${sc})`, run: () => lib.ringsteadySubset(f, b, k, sc) });
    } else if (kind === 2) {
      const [f, b, k, l] = [edge(), edge(), chance(0.5) ? edge() : between(-1, 50), edge()];
      const count = Math.min(k, b);
      const steps = count > 0 && b >= 1 && l >= 1 ? (Math.min(count + 1, Math.floor((b - 1) / l) + 1) + 1) * l : 0;
      if (valid(f, b, k) && l >= 1 && l <= 65536 && count <= 2 ** 24 && steps > 300000 && steps <= 2 ** 30) continue;
      cases.push({ sql: `rocksteadier_subset(${f}, ${b}, ${k}, ${l})`, run: () => lib.rocksteadierSubset(f, b, k, l) });
    } else if (kind === 3) {
      const key = randomKey();
      const b = pick([-1, 0, 1, 2, 5]);
      const r = Array.from({ length: below(4) }, () => between(-1, 5));
      cases.push({ sql: `jumpbackanchorhash(${key}, ${b}, '${arr(r)}'::int[])`, run: () => lib.jumpbackanchorhash(key, b, r) });
    } else {
      const b = pick([0, 1, 3, 5]);
      const r = Array.from({ length: below(3) }, () => between(0, 4));
      const x = between(-1, 5);
      cases.push({ sql: `jumpbackanchorhash_remove_bucket(${b}, '${arr(r)}'::int[], ${x})`, run: () => lib.jumpbackanchorhashRemoveBucket(b, r, x) });
    }
  }
  const rows = psql(`CREATE FUNCTION pg_temp.refused(q text) RETURNS text LANGUAGE plpgsql AS $f$
      BEGIN EXECUTE 'SELECT (' || q || ') IS NULL'; RETURN 'accepted';
      EXCEPTION WHEN invalid_parameter_value OR program_limit_exceeded OR numeric_value_out_of_range THEN RETURN 'refused';
      END $f$;
    SELECT pg_temp.refused(q) FROM unnest(ARRAY[${cases.map((c) => `$q$${c.sql}$q$`).join(',')}]) WITH ORDINALITY AS u(q, i) ORDER BY i;`);
  cases.forEach((c, i) => {
    check('argument checks', c.sql, rows[i], () => {
      try {
        c.run();
        return 'accepted';
      } catch (e) {
        if (e instanceof RangeError) return 'refused';
        throw e;
      }
    });
  });
}

for (const [fn, n] of shown) if (n > 5) console.log(`  (${fn}: ${n - 5} more failures not shown)`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
