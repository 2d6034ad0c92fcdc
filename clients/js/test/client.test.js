// Unit tests of the client (node --test).  The values marked "extension" were
// computed by the extension (psql, 1.2 on PostgreSQL 15); the XXH3 values of
// "" and "hello" are xxHash's own published test values.  check-against-extension
// compares everything with the extension on random inputs.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as s from '../src/index.js';

test('xxh3_64 of text and bytes', () => {
  assert.equal(s.xxh3_64(''), BigInt.asIntN(64, 0x2d06800538d394c2n));
  assert.equal(s.xxh3_64('hello'), BigInt.asIntN(64, 0x9555e8555c62dcfdn));
  assert.equal(s.xxh3_64('hello'), -7685981735718036227n); // extension
  assert.equal(s.xxh3_64(new TextEncoder().encode('hello')), s.xxh3_64('hello'));
  assert.throws(() => s.xxh3_64(42), TypeError);
  assert.throws(() => s.xxh3_64('\ud800'), /well-formed/);
});

test('jumpbackhash and jumphash', () => {
  assert.equal(s.jumpbackhash(42n, 16), 3); // extension
  assert.equal(s.jumphash(42n, 16), 2); // extension
  assert.equal(s.jumpbackhash('42', 16), 12); // extension
  assert.equal(s.jumpbackhash(42, 16), 3);
  assert.equal(s.jumpbackhash(-1n, 1), 0);
  assert.equal(s.jumpbackhash(-1n, 2 ** 31 - 1) >= 0, true);
  assert.equal(s.jumpbackhash(-1n, 7), s.jumpbackhash(2n ** 64n - 1n, 7));
  assert.throws(() => s.jumpbackhash(1n, 0), /at least 1, got 0/);
  assert.throws(() => s.jumpbackhash(1n, 2 ** 31), /2147483648/);
  assert.throws(() => s.jumpbackhash(1n, 1.5), /integer, got 1.5/);
  assert.throws(() => s.jumpbackhash(2 ** 60, 4), /BigInt/);
  assert.throws(() => s.jumpbackhash(2n ** 64n, 4), /64-bit/);
});

test('jumpbackhash moves keys only to a new bucket', () => {
  for (let k = 0n; k < 2000n; k++) {
    const a = s.jumpbackhash(k * 7919n, 10);
    const b = s.jumpbackhash(k * 7919n, 11);
    assert.ok(a === b || b === 10);
  }
});

test('jumpbackanchorhash', () => {
  assert.equal(s.jumpbackanchorhash(42n, 10, [3, 5]), 6); // extension
  const state = s.jumpbackanchorhashState(10, [3, 5]);
  assert.deepEqual([...state], [10, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0]);
  assert.equal(s.jumpbackanchorhash(42n, state), 6);
  assert.deepEqual(s.jumpbackanchorhashFromState(state), { buckets: 10, removed: [3, 5] });
  const set = new s.JumpBackAnchorSet(10, [3, 5]);
  for (let k = 0n; k < 1000n; k++) {
    const b = set.bucket(k);
    assert.ok(b !== 3 && b !== 5 && b >= 0 && b < 10);
    // a key on a bucket still there never moves
    const before = s.jumpbackhash(k, 10);
    if (before !== 3 && before !== 5) assert.equal(b, before);
  }
  assert.deepEqual(s.jumpbackanchorhashAddBucket(10, [3, 5]), { buckets: 10, removed: [3], bucket: 5 });
  assert.deepEqual(s.jumpbackanchorhashAddBucket(10, []), { buckets: 11, removed: [], bucket: 10 });
  assert.deepEqual(s.jumpbackanchorhashRemoveBucket(10, [3], 9), { buckets: 10, removed: [3, 9] });
  assert.deepEqual(s.jumpbackanchorhashRemoveBucket(10, [], 9), { buckets: 9, removed: [] });
  assert.throws(() => s.jumpbackanchorhash(1n, 10, [3, 10]), /removed bucket 10 is out of range for 10 buckets/);
  assert.throws(() => s.jumpbackanchorhash(1n, 10, [3, 3]), /bucket 3 is removed twice/);
  assert.throws(() => s.jumpbackanchorhash(1n, 2, [0, 1]), /all 2 buckets are removed/);
  assert.throws(() => s.jumpbackanchorhash(1n, 0), /at least 1, got 0/);
  assert.throws(() => s.jumpbackanchorhash(1n, new Uint8Array(5)), /length 5/);
  assert.throws(() => s.jumpbackanchorhashRemoveBucket(10, [3], 3), /already removed/);
});

test('ringsteady and rocksteadier subsets', () => {
  assert.deepEqual(s.ringsteadySubset(3, 10, 4), [3, 7, 0, 8]); // extension
  assert.deepEqual(s.rocksteadierSubset(3, 10, 4), [2, 5, 1, 7]); // extension
  assert.deepEqual(s.ringsteadySubset(0, 5, 0), []);
  const all = s.ringsteadySubset(7, 100, 1000, false);
  assert.equal(all.length, 100);
  assert.equal(new Set(all).size, 100);
  const rock = s.rocksteadierSubset(12, 95, 200, 10);
  assert.deepEqual([...rock].sort((a, b) => a - b), [...Array(95).keys()]);
  // a subset is a prefix of every larger one
  assert.deepEqual(s.rocksteadierSubset(12, 95, 30, 10), rock.slice(0, 30));
  assert.throws(() => s.ringsteadySubset(-1, 10, 3), /frontend must be at least 0, got -1/);
  assert.throws(() => s.ringsteadySubset(0, 0, 3), /backends must be at least 1, got 0/);
  assert.throws(() => s.ringsteadySubset(0, 2 ** 25, 2 ** 25), /too large/);
  assert.throws(() => s.rocksteadierSubset(0, 10, 3, 65537), /lot size must be between 1 and 65536, got 65537/);
});

// ring_build(ARRAY[1,2,3,4], ARRAY[1,1,1,1], ARRAY[1,1,2,2], ARRAY[0,0,0,1], 2, 2)::text, from the extension
const RING = '{"part_power": 2, "replicas": 2, "seed": 0, "nodes": [{"id": 1, "zone": 1, "region": 0, "weight": 1}, {"id": 2, "zone": 1, "region": 0, "weight": 1}, {"id": 3, "zone": 2, "region": 0, "weight": 1}, {"id": 4, "zone": 2, "region": 1, "weight": 1}], "assignment": [[3, 4, 1, 2], [4, 2, 4, 4]]}';

test('partition ring lookups', () => {
  const ring = s.PartitionRing.parse(RING);
  assert.equal(ring.partitions, 4);
  assert.equal(ring.partition(0n), 0);
  assert.equal(ring.partition(-1n), 3);
  assert.equal(ring.partition(1n << 62n), 1);
  assert.deepEqual(ring.nodesOf(-1n), [2, 4]);
  assert.deepEqual(ring.partitionNodes(1), [4, 2]);
  assert.deepEqual(ring.partitionHandoffNodes(0, 10), [2, 1]); // extension
  assert.deepEqual(ring.partitionHandoffNodes(0, 1), [2]);
  assert.deepEqual(ring.partitionHandoffNodes(0, 0), []);
  assert.equal(ring.partition('some key'), Number(BigInt.asUintN(64, s.xxh3_64('some key')) >> 62n));
  assert.throws(() => ring.partitionNodes(4), /partition must be between 0 and 3, got 4/);
  assert.throws(() => ring.partitionHandoffNodes(0, -1), /count must be between 0 and 65535, got -1/);
  assert.throws(() => s.PartitionRing.parse('{"part_power": 2}'), /"replicas" is missing/);
  assert.throws(() => s.PartitionRing.parse(RING.replace('[3, 4, 1, 2]', '[3, 4, 1, 9]')), /node 9, which is not in "nodes"/);
  assert.throws(() => s.PartitionRing.parse(RING.replace('[4, 2, 4, 4]', '[3, 2, 4, 4]')), /two replicas on node 3/);
  assert.throws(() => s.PartitionRing.parse(RING.replace('"part_power": 2', '"part_power": 25')), /part_power must be between 1 and 24, got 25/);
});
