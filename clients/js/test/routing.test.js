// Unit tests of the Router (node --test): its structure and its errors.  The
// buckets marked "extension" were computed by the extension (PostgreSQL 18,
// 1.2); test/check-clients routes random keys of tables the extension
// partitions through crosscheck.mjs and compares with where the rows go.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Router, jumpbackhash } from '../src/index.js';

// routing_layout('public.orders'): HASH (id jumpbackhash4_int8_ops)
const ORDERS = '{"key": "id", "table": "public.orders", "method": "hash_operator_class", "buckets": 4, "removed": [], "servers": {}, "version": "df10b318e3494e63", "key_hash": "value", "key_type": "bigint", "key_column": "id", "partitions": [{"bucket": 0, "server": null, "partition": "public.orders_0", "remote_table": null}, {"bucket": 1, "server": null, "partition": "public.orders_1", "remote_table": null}, {"bucket": 2, "server": null, "partition": "public.orders_2", "remote_table": null}, {"bucket": 3, "server": null, "partition": "public.orders_3", "remote_table": null}], "in_progress": null, "hash_function": "public.jumpbackhash"}';
// routing_layout('public.by_uuid'): LIST (jumpbackanchorhash(u, 5, '{1,3}')), partitions of buckets 0 and 2 only
const BY_UUID = '{"key": "u", "table": "public.by_uuid", "method": "jumpbackanchorhash", "buckets": 5, "removed": [1, 3], "servers": {}, "version": "a9caebd77913a465", "key_hash": "xxh3_64", "key_type": "uuid", "key_column": "u", "partitions": [{"bucket": 0, "server": null, "partition": "public.by_uuid_0", "remote_table": null}, {"bucket": 2, "server": null, "partition": "public.by_uuid_2", "remote_table": null}], "in_progress": null, "hash_function": "public.jumpbackanchorhash"}';

/** A layout of n buckets, one partition each (bucket b in schema s, table t_b), changed by `change`. */
function layout(method, keyType, n, change = {}) {
  const doc = {
    table: 's.t', method, hash_function: `public.${method === 'hash_operator_class' ? 'jumpbackhash' : method}`,
    key: 'k', key_column: 'k', key_type: keyType,
    key_hash: ['smallint', 'integer', 'bigint'].includes(keyType) ? 'value' : 'xxh3_64',
    buckets: n, removed: [],
    partitions: [...Array(n).keys()].map((b) => ({ bucket: b, partition: `s.t_${b}`, server: null, remote_table: null })),
    servers: {}, in_progress: null, version: '0123456789abcdef',
  };
  return { ...doc, ...change };
}

/** The sqlstate of what f throws ('no error' if nothing). */
function sqlstate(f) {
  try {
    f();
  } catch (e) {
    return e.sqlstate ?? e.constructor.name;
  }
  return 'no error';
}

test('a bigint key of a HASH operator class table', () => {
  const router = new Router(ORDERS);
  assert.deepEqual({ ...router.route(42n) }, { bucket: 3, partition: 'public.orders_3', server: null, remoteTable: null }); // extension
  assert.ok(Object.isFrozen(router.route(42n)));
  assert.ok(Object.isFrozen(router));
  assert.equal(router.route(42).partition, 'public.orders_3');
  assert.equal(router.route('42').partition, 'public.orders_3');
  assert.equal(router.route(-1n).bucket, 2); // extension
  assert.equal(router.route(2n ** 63n - 1n).bucket, 3); // extension
  assert.equal(router.route('-9223372036854775808').bucket, 1); // extension
  assert.equal(router.bucket(42n), 3);
  assert.equal(router.version, 'df10b318e3494e63');
  assert.equal(router.inProgress, null);
  assert.equal(router.throughCoordinator(3), false);
  assert.equal(router.table, 'public.orders');
  assert.equal(router.keyType, 'bigint');
  assert.equal(router.partitions.length, 4);
  // the parsed document (node-postgres's jsonb) routes alike
  assert.deepEqual(new Router(JSON.parse(ORDERS)).route(42n), router.route(42n));
});

test('integer keys: their type\'s range, and what is not an integer', () => {
  const router = new Router(ORDERS);
  assert.equal(sqlstate(() => router.route(2n ** 63n)), '22003');
  assert.equal(sqlstate(() => router.route('-9223372036854775809')), '22003');
  assert.equal(sqlstate(() => router.route(2 ** 70)), '22003');
  assert.equal(sqlstate(() => router.route(2 ** 60)), '22023'); // a Number that lost its digits: give a BigInt
  assert.equal(sqlstate(() => router.route(1.5)), '22P02');
  assert.equal(sqlstate(() => router.route('1.5')), '22P02');
  assert.equal(sqlstate(() => router.route('abc')), '22P02');
  assert.throws(() => router.route(null), (e) => e instanceof TypeError && /route\(\).*bigint/.test(e.message));
  assert.throws(() => router.route(new Uint8Array(8)), TypeError);
  const small = new Router(layout('hash_operator_class', 'smallint', 4));
  assert.equal(small.route(-1).bucket, jumpbackhash(-1n, 4)); // sign-extended: 2, extension
  assert.equal(small.route(-32768).bucket, jumpbackhash(-32768n, 4));
  assert.equal(small.route('32767').bucket, jumpbackhash(32767n, 4));
  assert.throws(() => small.route(32768), (e) => e.sqlstate === '22003' && /out of range for type smallint/.test(e.message));
  assert.equal(sqlstate(() => small.route(-32769n)), '22003');
  const int = new Router(layout('hash_operator_class', 'integer', 9));
  assert.equal(int.route(-(2 ** 31)).bucket, jumpbackhash(-(2n ** 31n), 9));
  assert.equal(sqlstate(() => int.route(2 ** 31)), '22003');
  assert.equal(sqlstate(() => int.route('-2147483649')), '22003');
});

test('uuid keys: parsed from their text form, never hashed as text', () => {
  const router = new Router(BY_UUID);
  // the uuid's bucket is 2, its text's 4 (extension): the text form must not be hashed as text
  const zero = '00000000-0000-0000-0000-000000000000';
  assert.deepEqual({ ...router.route(zero) }, { bucket: 2, partition: 'public.by_uuid_2', server: null, remoteTable: null });
  for (const form of ['{00000000-0000-0000-0000-000000000000}', '00000000000000000000000000000000', '0000-0000-0000-0000-0000-0000-0000-0000']) {
    assert.equal(router.route(form).bucket, 2, form);
  }
  assert.equal(router.route(new Uint8Array(16)).bucket, 2);
  const u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
  assert.equal(router.route(u.toUpperCase()).bucket, 2); // extension
  assert.equal(router.route(Buffer.from(u.replaceAll('-', ''), 'hex')).bucket, 2);
  // bucket 4 (extension) has no partition: PostgreSQL's error for a row no partition takes
  assert.throws(() => router.route('0e4f0c5a-6b1c-4b34-9f8e-2a3c4d5e6f70'),
    (e) => e.sqlstate === '23514' && /bucket 4/.test(e.message) && /public\.by_uuid/.test(e.message));
  for (const bad of ['not-a-uuid', `${zero}0`, zero.slice(0, -1), `{${zero}`, `-${zero}`, `${zero.replaceAll('-', '')}-`,
    '00000000--0000-0000-0000-000000000000', '']) {
    assert.equal(sqlstate(() => router.route(bad)), '22P02', bad);
  }
  assert.equal(sqlstate(() => router.route(new Uint8Array(15))), '22P02');
  assert.throws(() => router.route(42n), (e) => e instanceof TypeError && /route\(\).*uuid/.test(e.message));
});

test('text and bytea keys', () => {
  const text = new Router(layout('jumpbackhash', 'text', 7));
  assert.equal(text.route('ключ').bucket, 2); // extension
  assert.equal(text.route('').bucket, 5); // extension
  assert.equal(text.route('00000000-0000-0000-0000-000000000000').bucket, jumpbackhash('00000000-0000-0000-0000-000000000000', 7));
  assert.throws(() => text.route(new Uint8Array(2)), (e) => e instanceof TypeError && /route\(\).*text/.test(e.message));
  assert.throws(() => text.route(42), TypeError);
  const bytea = new Router(layout('jumphash', 'bytea', 7));
  assert.equal(bytea.route(Uint8Array.of(1, 2, 255)).bucket, 1); // extension
  assert.equal(bytea.route(Buffer.from('0102ff', 'hex')).partition, 's.t_1');
  assert.throws(() => bytea.route('\\x0102ff'), (e) => e instanceof TypeError && /route\(\).*bytea/.test(e.message));
});

test('servers, and keys during an operation in progress', () => {
  const doc = layout('jumpbackhash', 'bigint', 4);
  doc.partitions[3] = { bucket: 3, partition: 's.t_3', server: 'shard1', remote_table: 's.t_3' };
  doc.servers = { shard1: { host: 'db1', port: '5432', dbname: 'shards' } };
  doc.in_progress = { operation: 'move', phase: 'copy', interrupted: false, buckets: [3] };
  const router = new Router(doc);
  const r = router.route(42n);
  assert.deepEqual({ ...r }, { bucket: 3, partition: 's.t_3', server: 'shard1', remoteTable: 's.t_3' });
  assert.deepEqual({ ...router.servers.shard1 }, { host: 'db1', port: '5432', dbname: 'shards' });
  assert.deepEqual({ ...router.inProgress, buckets: [...router.inProgress.buckets] },
    { operation: 'move', phase: 'copy', interrupted: false, buckets: [3] });
  assert.equal(router.throughCoordinator(3), true);
  assert.equal(router.throughCoordinator(r), true);
  assert.equal(router.throughCoordinator(0), false);
  assert.throws(() => router.throughCoordinator('3'), TypeError);
  // a resharding: every bucket
  const all = new Router({ ...doc, in_progress: { operation: 'reshard', phase: 'copy', interrupted: true, buckets: null } });
  assert.equal(all.inProgress.buckets, null);
  assert.ok([0, 1, 2, 3].every((b) => all.throughCoordinator(b)));
  // partitions whose bound is not one bucket are listed, and route no key
  const odd = new Router({ ...layout('jumpbackhash', 'bigint', 4), partitions: [{ bucket: null, partition: 's.other', server: null, remote_table: null }] });
  assert.equal(odd.partitions[0].partition, 's.other');
  assert.equal(sqlstate(() => odd.route(42n)), '23514');
});

test('a document that is not a routing layout: 22023, naming Router', () => {
  const base = layout('jumpbackanchorhash', 'text', 5, {
    removed: [1],
    partitions: [0, 2, 3, 4].map((b) => ({ bucket: b, partition: `s.t_${b}`, server: null, remote_table: null })),
  });
  assert.equal(new Router(base).route('x').partition.startsWith('s.t_'), true);
  const bad = [
    'not json', '[]', 'null', '42', 42, null, undefined, [],
    { ...base, method: 'modulo' }, { ...base, key_type: 'numeric' }, { ...base, key_type: 'integer' },
    { ...base, key_hash: 'value' }, { ...base, buckets: 0 }, { ...base, buckets: 2 ** 31 }, { ...base, buckets: '5' },
    { ...base, removed: [5] }, { ...base, removed: [1, 1] }, { ...base, removed: [0, 1, 2, 3, 4] },
    { ...base, hash_function: 'public.jumphash' }, { ...base, version: 'x' }, { ...base, servers: [] },
    { ...base, partitions: {} }, { ...base, partitions: [{ bucket: 0, partition: 's.t_0', server: null }] },
    { ...base, partitions: [{ bucket: 1, partition: 's.t_1', server: null, remote_table: null }] },
    { ...base, partitions: [{ bucket: 5, partition: 's.t_5', server: null, remote_table: null }] },
    { ...base, partitions: [0, 0].map((b) => ({ bucket: b, partition: `s.t_${b}`, server: null, remote_table: null })) },
    { ...base, in_progress: { operation: 'move', phase: 'copy', interrupted: false } },
    { ...base, in_progress: { operation: 'move', phase: 'copy', interrupted: false, buckets: 3 } },
    layout('jumpbackhash', 'text', 4, { removed: [1] }),
    layout('jumphash', 'smallint', 4),
  ];
  for (const name of ['table', 'method', 'key', 'key_column', 'buckets', 'partitions', 'in_progress', 'version']) {
    const doc = { ...base };
    delete doc[name];
    bad.push(doc);
  }
  for (const doc of bad) {
    assert.throws(() => new Router(doc), (e) => e instanceof RangeError && e.sqlstate === '22023' && /^Router: /.test(e.message),
      JSON.stringify(doc)?.slice(0, 200));
  }
  // other members may come: they are not read
  assert.equal(new Router({ ...base, something_new: 1 }).version, base.version);
});

test('crosscheck.mjs: route lines', () => {
  const key = (k) => JSON.stringify({ fn: 'route', args: [BY_UUID, k], types: [null, 'text'] });
  const lines = [
    JSON.stringify({ fn: 'route', args: [ORDERS, 42] }),
    JSON.stringify({ fn: 'route', args: [ORDERS, '-9223372036854775808'] }),
    key('00000000-0000-0000-0000-000000000000'), key('0e4f0c5a-6b1c-4b34-9f8e-2a3c4d5e6f70'), key('nope'), key(7),
    JSON.stringify({ fn: 'route', args: [ORDERS, '9223372036854775808'] }),
    JSON.stringify({ fn: 'route', args: ['{"table": "x"}', 1] }),
    JSON.stringify({ fn: 'route', args: [ORDERS] }),
  ];
  const program = fileURLToPath(new URL('../crosscheck.mjs', import.meta.url));
  const p = spawnSync(process.execPath, [program], { input: lines.join('\n') + '\n', encoding: 'utf8' });
  assert.equal(p.status, 0, p.stderr);
  const out = p.stdout.trim().split('\n');
  assert.equal(out[0], '{"bucket":3,"partition":"public.orders_3","server":null}');
  assert.equal(out[1], '{"bucket":1,"partition":"public.orders_1","server":null}');
  assert.equal(out[2], '{"bucket":2,"partition":"public.by_uuid_2","server":null}');
  assert.deepEqual(out.slice(3).map((l) => JSON.parse(l).error), ['23514', '22P02', '42883', '22003', '22023', '42883']);
});
