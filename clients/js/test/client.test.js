// Unit tests of the client (node --test).  The values marked "extension" were
// computed by the extension (psql, 1.2 on PostgreSQL 15); the XXH3 values of
// "" and "hello" are xxHash's own published test values.  test/check-clients
// compares everything with the extension on random inputs.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as s from '../src/index.js';

test('xxh3_64 of text and bytes', () => {
  assert.equal(s.xxh3_64(''), BigInt.asIntN(64, 0x2d06800538d394c2n));
  assert.equal(s.xxh3_64('hello'), BigInt.asIntN(64, 0x9555e8555c62dcfdn));
  assert.equal(s.xxh3_64('hello'), -7685981735718036227n); // extension
  assert.equal(s.xxh3_64(new TextEncoder().encode('hello')), s.xxh3_64('hello'));
  assert.throws(() => s.xxh3_64(null), TypeError);
  assert.throws(() => s.xxh3_64('\ud800'), /well-formed/);
});

// xxh3_64 of an integer: XXH3-64 of its 8 little-endian bytes, as the reference computes it:
// `xxhsum -H3` (xxHash 0.8.1) and python3-xxhash (xxh3_64_intdigest(struct.pack('<q', v))) agree.
test('xxh3_64 of integers (the extension\'s xxh3_64(bigint))', () => {
  const vectors = [
    [0n, 0xc77b3abb6f87acd9n], [1n, 0x2fbc593564db792en], [-1n, 0x5111c7e47d784413n],
    [42n, 0xd5a6f8c838df27c8n], [2n ** 63n - 1n, 0xa233cf376558df46n], [-(2n ** 63n), 0x828f2476789a0e5fn],
    [2n ** 53n + 1n, 0x0ff84143ab99dcd0n], [-123456789012345n, 0x15b0b82581adf205n],
  ];
  for (const [v, want] of vectors) assert.equal(s.xxh3_64(v), BigInt.asIntN(64, want), `xxh3_64(${v}n)`);
  assert.equal(s.xxh3_64(42), s.xxh3_64(42n));
  assert.equal(s.xxh3_64(2n ** 64n - 1n), s.xxh3_64(-1n)); // the unsigned reading of the same bits
  assert.throws(() => s.xxh3_64(2 ** 60), /BigInt/);
  assert.throws(() => s.xxh3_64(2n ** 64n), /64-bit/);
});

// Random integers against python3-xxhash, run now (skipped where /usr/bin/python3 has no xxhash).
test('xxh3_64 of random integers against python3-xxhash', (t) => {
  const values = [];
  for (let i = 0; i < 500; i++) {
    let v = 0n;
    for (let j = 0; j < 4; j++) v = (v << 16n) | BigInt(Math.floor(Math.random() * 65536));
    values.push(i % 5 === 0 ? BigInt(Math.floor(Math.random() * 2000) - 1000) : BigInt.asIntN(64, v));
  }
  const p = spawnSync('/usr/bin/python3', ['-c',
    "import struct, sys, xxhash\nfor line in sys.stdin:\n    print(xxhash.xxh3_64_intdigest(struct.pack('<q', int(line))))"],
  { input: values.join('\n') + '\n', encoding: 'utf8' });
  if (p.status !== 0) {
    t.skip(`no reference: /usr/bin/python3 with python3-xxhash (${(p.stderr || p.error || '').toString().trim()})`);
    return;
  }
  const want = p.stdout.trim().split('\n').map((x) => BigInt.asIntN(64, BigInt(x)));
  assert.equal(want.length, values.length);
  values.forEach((v, i) => assert.equal(s.xxh3_64(v), want[i], `xxh3_64(${v}n)`));
});

test('errors carry the extension\'s SQLSTATE', () => {
  const state = (f) => {
    try {
      f();
    } catch (e) {
      return e.sqlstate;
    }
    return 'no error';
  };
  assert.equal(state(() => s.jumpbackhash(1n, 0)), '22023');
  assert.equal(state(() => s.jumpbackanchorhashAddBucket(2147483647, [])), '54000');
  assert.equal(state(() => s.ringsteadySubset(1, 2147483647, 2147483647)), '54000');
  assert.equal(state(() => s.rocksteadierSubset(1, 2147483647, 1 << 24, 65536)), '54000');
  assert.equal(state(() => s.PartitionRing.parse('{"part_power": 0}')), '22P02');
  assert.equal(state(() => s.jumpbackhash(1n, 'x')), undefined); // a TypeError: no SQL call has that type
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

// Rocksteadier with large lots (the shuffles run in WebAssembly, from the first row read), from the extension
// (psql, 1.2 on PostgreSQL 18): whole subsets, or of the larger ones the count and sum(b * i), i the 1-based place
test('rocksteadier subsets of large lots', () => {
  const weighted = (subset) => subset.reduce((acc, b, i) => acc + BigInt(b) * BigInt(i + 1), 0n);
  const big = s.rocksteadierSubset(5, 2147483647, 300, 65536);
  assert.equal(big.length, 300);
  assert.deepEqual(big.slice(0, 6), [10861, 1073748135, 536877015, 1610637325, 268464191, 1342195318]);
  assert.deepEqual(big.slice(-3).reverse(), [1782601021, 708881545, 1245734577]);
  assert.equal(big.reduce((a, b) => a + b, 0), 318961019455);
  assert.equal(weighted(big), 48347250657816n);
  // several passes from row 3720 / several from row 65535 (the rows read wrap around) / all 10 rows, from row 7
  assert.deepEqual(s.rocksteadierSubset(70000, 200000, 10, 65536), [92100, 13705, 153512, 75847, 226, 165581, 81194, 20495, 172724, 89164]);
  assert.deepEqual(s.rocksteadierSubset(131071, 200000, 7, 65536), [78543, 197861, 52784, 167678, 104893, 21198, 193193]);
  assert.deepEqual(s.rocksteadierSubset(9, 95, 95, 10), [0, 87, 41, 29, 68, 18, 56, 39, 77, 3, 88, 47, 28, 63, 13, 94, 59, 33, 72, 8, 89, 40, 22, 60, 17, 92, 54, 38, 75, 4, 84, 43, 27, 62, 19, 50, 31, 70, 9, 82, 42, 20, 61, 14, 51, 30, 78, 2, 81, 46, 21, 69, 10, 91, 52, 34, 79, 5, 83, 44, 26, 67, 15, 90, 53, 32, 74, 1, 80, 45, 24, 65, 12, 58, 36, 71, 7, 86, 49, 23, 64, 11, 57, 37, 73, 6, 85, 48, 25, 66, 16, 93, 55, 35, 76]);
  const many = s.rocksteadierSubset(3, 262144, 100000, 65536);
  assert.equal(many.length, 100000);
  assert.equal(weighted(many), 655465986386022n);
  assert.deepEqual(s.rocksteadierSubset(123456, 1000000, 40, 1000), [123320, 635922, 379932, 891591, 251278, 763448, 507286, 7732, 519003, 263474, 775546, 135852, 647269, 391589, 903478, 71272, 583095, 327289, 839712, 199452, 711527, 455825, 967724, 39576, 551301, 295218, 807236, 167977, 679200, 423995, 935708, 103118, 615363, 359283, 871426, 231280, 743314, 487090, 999055, 23287]);
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

// Both found by test/check-clients: the extension checks a state whole in jumpbackanchorhash_buckets and
// jumpbackanchorhash_removed, and a ring's seed as a 64-bit integer.
test('states and ring seeds are checked as the extension checks them', () => {
  const state = (hex) => Uint8Array.from(Buffer.from(hex, 'hex'));
  assert.throws(() => s.jumpbackanchorhashFromState(state('0500000005000000')), /out of range/);
  assert.throws(() => s.jumpbackanchorhashFromState(state('0000000000000000')), /out of range/);
  assert.deepEqual(s.jumpbackanchorhashFromState(state('0500000002000000')), { buckets: 5, removed: [2] });
  const ring = (seed) => `{"part_power": 1, "replicas": 1, "seed": ${seed}, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": [[1, 1]]}`;
  assert.equal(s.PartitionRing.parse(ring('-9223372036854775808')).seed, -(2n ** 63n));
  for (const bad of ['"x"', '9223372036854775808', '1.5', '1e3', '0.0']) {
    assert.throws(() => s.PartitionRing.parse(ring(bad)), (e) => e.sqlstate === '22P02', `seed ${bad}`);
  }
  // integers written as 1.0 or 1e0 are refused (JSON.parse reads them as integers); weights take any number
  assert.throws(() => s.PartitionRing.parse(ring(0).replace('"part_power": 1', '"part_power": 1.0')), /expected an integer/);
  assert.throws(() => s.PartitionRing.parse(ring(0).replace('[[1, 1]]', '[[1, 1e0]]')), /expected an integer/);
  assert.equal(s.PartitionRing.parse(ring(0).replace('"weight": 1', '"weight": 1.5e0')).nodes[0].weight, 1.5);
});
